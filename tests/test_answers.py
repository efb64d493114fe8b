"""Answers split into free and premium parts; markers inside code fences are text."""

from __future__ import annotations

from qbank.answers import FreeText, PremiumSection, code_fence_lines, parse_answer


def test_free_and_premium_parts_in_order() -> None:
    text = "Free one.\n\n/// premium\n## Deep\nSecret A.\n///\n\nFree two.\n\n/// premium\n## Deeper\nSecret B.\n///\n"
    answer, problems = parse_answer(text, "s", "answers/s.md")
    assert problems == [] and answer is not None
    kinds = [type(p) for p in answer.parts]
    assert kinds == [FreeText, PremiumSection, FreeText, PremiumSection]
    assert [s.heading for s in answer.premium] == ["Deep", "Deeper"]
    assert [(s.line, s.end_line) for s in answer.premium] == [(3, 6), (10, 13)]
    assert "Secret" not in answer.free_markdown and "Free two." in answer.free_markdown


def test_markers_inside_code_fences_are_ignored() -> None:
    text = "Free.\n\n````markdown\n/// premium\n```\nnested\n```\n////\n````\n\nStill free.\n"
    answer, problems = parse_answer(text, "s", "answers/s.md")
    assert problems == [] and answer is not None
    assert answer.premium == ()
    assert "/// premium" in answer.free_markdown


def test_fence_tracking_needs_matching_char_and_length() -> None:
    lines = ["```", "~~~", "``", "```", "after"]
    assert code_fence_lines(lines) == [True, True, True, True, False]


def test_premium_block_can_contain_code() -> None:
    text = "Free.\n/// premium\n## Code\n```python\nprint('///')\n```\n///\n"
    answer, problems = parse_answer(text, "s", "answers/s.md")
    assert problems == [] and answer is not None
    assert "print('///')" in answer.premium[0].markdown


def test_every_problem_is_collected() -> None:
    text = "# Title\n///\n/// premium\nno heading\n///\n/// premium\n## open\n"
    _answer, problems = parse_answer(text, "s", "answers/s.md")
    assert [(p.line, p.code) for p in problems] == [
        (1, "answer-h1"),
        (2, "premium-stray-close"),
        (4, "premium-no-heading"),
        (6, "premium-unclosed"),
    ]
