"""Nothing passes unread: a token holding a digit that no rule reads is a positioned claim-unread error."""

from __future__ import annotations

from qbank.claims import check_answer_text
from qbank.claims.bind import Declared
from qbank.claims.extract import extract


def _values() -> list[Declared]:
    return [Declared("gpus", "given", 8.0, "GPUs", 3)]


def test_an_unread_token_is_an_error_naming_it() -> None:
    text = "It runs on 8 GPUs with a 5foo layout.\n"
    result = check_answer_text("s", "answers/s.md", text, _values())
    problems = [(p.line, p.col, p.code) for p in result.problems]
    assert problems == [(1, 26, "claim-unread")]
    assert '"5foo"' in result.problems[0].message
    assert result.summary()["unbound"] == 1


def test_an_exemption_or_a_binding_resolves_it() -> None:
    exempt = check_answer_text("s", "answers/s.md", "A 5foo{!a vendor's knob name} layout.\n", _values())
    assert exempt.problems == []
    assert [b.status for b in exempt.bindings] == ["exempt"]
    bound = check_answer_text("s", "answers/s.md", "An 8foo{=gpus} layout.\n", _values())
    assert bound.problems == []
    assert [b.status for b in bound.bindings] == ["bound"]


def test_unread_is_reported_even_without_a_verification_record() -> None:
    result = check_answer_text("s", "answers/s.md", "A 5foo layout on 8 GPUs.\n", None)
    assert sorted(p.code for p in result.problems) == ["claim-unread", "claims-unverified"]


def test_headings_tables_and_admonitions_are_read_too() -> None:
    md = (
        "## A 5foo heading\n\n| knob | value |\n|---|---|\n| 7zz | 3 |\n\n"
        '!!! note "Title 9yy"\n    body 6kk here\n'
    )
    quantities, _ = extract(md)
    unread = [(q.line, q.col, q.text, q.context) for q in quantities if q.found.rule == "unread"]
    assert unread == [
        (1, 6, "5foo", "heading"),
        (5, 3, "7zz", "table"),
        (7, 17, "9yy", "admonition_title"),
        (8, 10, "6kk", "admonition"),
    ]
