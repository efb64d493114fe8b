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
