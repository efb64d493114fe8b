"""Quoted numbers and numbers in a sentence marked {?} as a claim being tested never bind automatically."""

from __future__ import annotations

from qbank.claims import Declared, check_answer_text
from qbank.claims.held import held_spans
from qbank.render.text import strip_markers

VALUES = [Declared("h100_prefill_instances", "claim", 4, "nodes", 3), Declared("h100_nodes", "claim", 2, "nodes", 4)]


def problems(md: str) -> list[tuple[int, int, str]]:
    result = check_answer_text("a", "answers/a.md", md, VALUES)
    return [(p.line, p.col, p.code) for p in result.problems if p.level.value == "error"]


def test_a_quoted_number_is_not_auto_bound_and_says_what_it_would_bind_to() -> None:
    md = 'The common claim that it "needs four H100 nodes" is a layout, not a requirement; it needs 2 nodes.'
    result = check_answer_text("a", "answers/a.md", md, VALUES)
    (problem,) = [p for p in result.problems if p.level.value == "error"]
    assert (problem.line, problem.col, problem.code) == (1, 33, "claim-quoted")
    assert "h100_prefill_instances" in problem.message and "{!why}" in problem.message
    assert [b.status for b in result.bindings] == ["quoted", "bound"]  # the unquoted number still binds


def test_curly_quotes_and_quotes_across_a_line_break_hold_too() -> None:
    assert problems("They say it “needs four H100 nodes” today.") == [(1, 20, "claim-quoted")]
    assert problems('They say "it needs\nfour H100 nodes" today.') == [(2, 1, "claim-quoted")]


def test_an_explicit_marker_or_an_exemption_settles_a_quoted_number() -> None:
    assert problems('the claim "needs four H100 nodes{!the layout refuted here}" is wrong') == []
    assert problems('the claim "needs four H100 nodes{=h100_prefill_instances}" holds') == []
    assert problems('the claim "needs five H100 nodes{=h100_prefill_instances}" holds') == [(1, 18, "claim-mismatch")]


def test_a_sentence_marked_tested_holds_all_its_numbers_and_only_its_own() -> None:
    md = "It has 2 nodes. Some say it needs 4 nodes and 2 nodes more{?}. But 4 nodes suffice."
    assert problems(md) == [(1, 35, "claim-tested"), (1, 47, "claim-tested")]
    # after the full stop, the marker still closes the sentence before it
    assert problems("It has 2 nodes. Some say 4 nodes.{?} We have 2 nodes.") == [(1, 26, "claim-tested")]


def test_quotes_in_code_html_links_and_admonition_titles_hold_nothing() -> None:
    md = (
        '!!! note "The 4 nodes"\n    It uses 4 nodes.\n\n'
        'Run `x = "a"` on 4 nodes, see [the page](https://example.com "title") and 2 nodes <span title="x">.\n'
    )
    assert held_spans(md) == []
    assert problems(md) == []


def test_readers_never_see_the_tested_marker() -> None:
    assert strip_markers("Some say 4 nodes{=h100_prefill_instances} will do{?}.") == "Some say 4 nodes will do."
    assert strip_markers("a claim being tested{?refuted below}.") == "a claim being tested."


def test_the_tested_marker_may_give_a_reason_whose_digits_are_not_numbers() -> None:
    assert problems("Some say it needs 4 nodes{?the 8 GPU claim}.") == [(1, 19, "claim-tested")]
