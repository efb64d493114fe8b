"""Cross-file checks: missing and orphan files, references, access rules, no cascades."""

from __future__ import annotations

from pathlib import Path

import pytest

from qbank.corpus import load_corpus


def codes(root: Path) -> set[tuple[str, int, int, str]]:
    _corpus, report = load_corpus(root)
    return {(p.path, p.line, p.col, p.code) for p in report.problems}


def test_tiny_repo_is_clean(tiny_repo: Path) -> None:
    corpus, report = load_corpus(tiny_repo)
    assert report.problems == []
    assert list(corpus.questions) == ["base-question"]
    assert report.files == 6


def test_missing_answer_and_script(tiny_repo: Path) -> None:
    (tiny_repo / "answers" / "base-question.md").unlink()
    (tiny_repo / "verify" / "base-question.py").unlink()
    assert codes(tiny_repo) == {
        ("questions/base-question.yaml", 1, 1, "answer-missing"),
        ("questions/base-question.yaml", 1, 1, "verify-missing"),
    }


def test_orphan_answer_and_script(tiny_repo: Path) -> None:
    (tiny_repo / "answers" / "lonely.md").write_text("Text.\n")
    (tiny_repo / "verify" / "lonely.py").write_text("x = 1\n")
    assert codes(tiny_repo) == {
        ("answers/lonely.md", 1, 1, "answer-orphan"),
        ("verify/lonely.py", 1, 1, "verify-orphan"),
    }


def test_shared_verify_lib_and_private_files_are_not_questions(tiny_repo: Path) -> None:
    (tiny_repo / "verify" / "_lib").mkdir()
    (tiny_repo / "verify" / "_lib" / "models.py").write_text("LAYERS = 80\n")
    (tiny_repo / "verify" / "_helpers.py").write_text("x = 1\n")
    assert codes(tiny_repo) == set()


def test_wrong_extension_in_questions(tiny_repo: Path) -> None:
    (tiny_repo / "questions" / "other.yml").write_text("title: x\n")
    assert codes(tiny_repo) == {("questions/other.yml", 0, 0, "file-extension")}


def test_invalid_question_does_not_cascade_into_unknown_related(tiny_repo: Path) -> None:
    q = tiny_repo / "questions" / "base-question.yaml"
    broken = tiny_repo / "questions" / "broken.yaml"
    broken.write_text(q.read_text().replace("editorial_rank: 990", "editorial_rank: lots"))
    for folder, suffix in (("answers", ".md"), ("verify", ".py")):
        (tiny_repo / folder / f"broken{suffix}").write_text((tiny_repo / folder / f"base-question{suffix}").read_text())
    q.write_text(q.read_text() + "related: [broken]\n")
    assert codes(tiny_repo) == {("questions/broken.yaml", 9, 17, "field-type")}


def test_duplicate_reference_in_a_list(tiny_repo: Path) -> None:
    q = tiny_repo / "questions" / "base-question.yaml"
    q.write_text(q.read_text().replace("concepts: [kv-cache]", "concepts: [kv-cache, kv-cache]"))
    assert codes(tiny_repo) == {("questions/base-question.yaml", 12, 22, "duplicate-ref")}


def test_topic_questions_order_easiest_first_then_editorial_rank(tiny_repo: Path) -> None:
    q = tiny_repo / "questions" / "base-question.yaml"
    text = q.read_text()
    for slug, difficulty, rank in (("hard-popular", 4, 1), ("easy-quiet", 1, 997), ("easy-popular", 1, 950)):
        (tiny_repo / "questions" / f"{slug}.yaml").write_text(
            text.replace("difficulty: 2", f"difficulty: {difficulty}").replace(
                "editorial_rank: 990", f"editorial_rank: {rank}"
            )
        )
        for folder, suffix in (("answers", ".md"), ("verify", ".py")):
            src = tiny_repo / folder / f"base-question{suffix}"
            (tiny_repo / folder / f"{slug}{suffix}").write_text(src.read_text())
    corpus, report = load_corpus(tiny_repo)
    assert report.errors == 0
    assert corpus.topic_questions("kv-cache") == ["easy-popular", "easy-quiet", "base-question", "hard-popular"]


@pytest.mark.parametrize(
    ("name", "reference"),
    [("topics", "unknown-topic"), ("companies", "unknown-company"), ("concepts", "unknown-concept")],
)
def test_each_missing_catalog_file_is_reported(tiny_repo: Path, name: str, reference: str) -> None:
    """Each of the three catalogs, named here: its absence is a problem of its own, and the question's references
    into it are then unknown (a missing catalog knows nothing), never a crash or a silent pass."""
    (tiny_repo / "questions" / "_catalog" / f"{name}.yaml").unlink()
    got = codes(tiny_repo)
    assert (f"questions/_catalog/{name}.yaml", 0, 0, "catalog-missing") in got
    assert ("questions/base-question.yaml", reference) in {(p, c) for p, _, _, c in got}
