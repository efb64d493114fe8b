"""premium-duplicated: free text that repeats premium text is a positioned error at `qbank check`."""

from __future__ import annotations

from pathlib import Path

from qbank.corpus import load_corpus
from qbank.pipeline import duplicated_problems
from qbank.seal.premium_text import located_words

from ..conftest import CASES, make_site_repo

REPO = Path(__file__).parents[2]
PREMIUM = "The outlier channel of the value cache saturates first when the calibration window skips the long tail"


def test_markdown_words_are_the_words_a_reader_sees() -> None:
    text = "See [the **docs**](https://x.example/a_b) {: .c } and `x_y`{=k}\n```python\ncode_here()\n```\n_em_ &amp;"
    assert [w for w, _, _ in located_words(text)] == ["see", "the", "docs", "and", "x_y", "code_here", "em"]
    assert [n for _, n, _ in located_words(text, 10)][-2:] == [12, 14]


def test_a_free_answer_repeating_premium_text_is_positioned(tmp_path: Path) -> None:
    content = tmp_path / "content"
    make = make_site_repo
    import shutil

    shutil.copytree(CASES / "site", content)
    fp8 = content / "answers" / "kv-fp8.md"
    fp8.write_text(fp8.read_text().replace("SECRET-PREMIUM-FP8-ROUNDING:", PREMIUM + ". SECRET-PREMIUM-FP8-ROUNDING:"))
    budget = content / "answers" / "kv-budget.md"
    budget.write_text(budget.read_text() + "\nAs the premium part says, " + PREMIUM.lower() + " indeed.\n")
    root = make(tmp_path / "repo", content)
    corpus, _ = load_corpus(root)
    problems = duplicated_problems(corpus)
    assert [(p.path, p.code) for p in problems] == [("answers/kv-budget.md", "premium-duplicated")]
    lines = budget.read_text().split("\n")
    assert problems[0].line == next(i for i, ln in enumerate(lines, 1) if "premium part says" in ln)
    assert "answers/kv-fp8.md" in problems[0].message and "saturates" not in problems[0].message  # no quote


def test_the_real_corpus_has_no_duplicates() -> None:
    # Its cost is measured by bench/serve.py (the check's share of a save), not timed here.
    corpus, report = load_corpus(REPO)
    assert report.errors == 0
    assert duplicated_problems(corpus) == []


def test_a_public_question_field_repeating_premium_text_is_positioned(tmp_path: Path) -> None:
    # The description is on every page that lists the question, in clear: a premium section that restates it
    # would fail the build's leak scan, so `qbank check` says so first, at the field.
    content = tmp_path / "content"
    import shutil

    shutil.copytree(CASES / "site", content)
    question = content / "questions" / "kv-fp8.yaml"
    said = "an FP8 cache saves half the attention bytes only until the per-block scales spill out of shared memory"
    old = "The kv-fp8 test question of the qbank test corpus, with a description long enough for a snippet."
    new = f"Why {said} on long contexts."
    question.write_text(question.read_text().replace(f'description: "{old}"', f'description: "{new}"'))
    fp8 = content / "answers" / "kv-fp8.md"
    fp8.write_text(fp8.read_text().replace("SECRET-PREMIUM-FP8-LONG:", f"In short, {said}. SECRET-PREMIUM-FP8-LONG:"))
    root = make_site_repo(tmp_path / "repo", content)
    corpus, _ = load_corpus(root)
    problems = duplicated_problems(corpus)
    assert [(p.path, p.code) for p in problems] == [("questions/kv-fp8.yaml", "premium-duplicated")]
    lines = question.read_text().split("\n")
    assert problems[0].line == next(i for i, ln in enumerate(lines, 1) if ln.startswith("description:"))


def _fresh(corpus: object) -> tuple[object, object]:
    """shared_code and free_sources with every kept result dropped first."""
    from qbank.seal import premium_text

    premium_text._SHARED.clear()
    premium_text._SCRIPTS.clear()
    premium_text._QUESTION_SOURCES.clear()
    premium_text._answer_sources.cache_clear()
    return premium_text.shared_code(corpus), list(premium_text.free_sources(corpus))  # type: ignore[arg-type]


def test_kept_shared_runs_and_free_sources_follow_each_edit(tmp_path: Path) -> None:
    """What `qbank serve` keeps between checks (script runs by file stamp, shared runs by their inputs, a question's
    sources by its parsed file) equals a fresh computation after a script, an answer and a question edit."""
    import shutil

    from qbank.memo import Memo
    from qbank.seal.premium_text import free_sources, shared_code

    root = tmp_path / "repo"
    for part in ("questions", "answers", "verify"):
        shutil.copytree(CASES / "site" / part, root / part)
    memo = Memo()

    def kept() -> tuple[object, object]:
        corpus = load_corpus(root, memo=memo)[0]
        return shared_code(corpus), list(free_sources(corpus))

    first = kept()
    assert first == _fresh(load_corpus(root)[0])
    sentence = "the cache grows with every token of every request in flight"
    script = root / "verify" / "kv-fp8.py"  # a premium question's script now shows a free answer's words
    script.write_text(script.read_text() + f"# {sentence}\n")
    budget = root / "answers" / "kv-budget.md"
    budget.write_text(budget.read_text() + f"\nIn short, {sentence}.\n")
    edited = kept()
    assert edited == _fresh(load_corpus(root)[0])
    shared = edited[0]
    assert isinstance(shared, dict) and ("cache", "grows", "with", "every", "token", "of") in shared["kv-fp8"]
    question = root / "questions" / "kv-fp8.yaml"
    question.write_text(question.read_text().replace('title: "Is an FP8', 'title: "RETITLED Is an FP8', 1))
    retitled = kept()
    assert retitled == _fresh(load_corpus(root)[0])
    assert any(s.text.startswith("RETITLED") for s in retitled[1])  # type: ignore[attr-defined]
