"""The extraction table: every sentence in cases.yaml yields exactly the quantities it lists."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from qbank.claims.extract import extract
from qbank.claims.grammar import RULES as GRAMMAR_RULES
from qbank.claims.identifiers import RULES as IDENTIFIER_RULES
from qbank.claims.identifiers import identifier_spans

CASES: list[dict[str, Any]] = yaml.safe_load((Path(__file__).parent / "cases.yaml").read_text(encoding="utf-8"))


def found(sentence: str) -> list[str]:
    quantities, _ = extract(sentence)
    return [
        " ".join(q.text.split()) + " => " + ("unread" if q.found.rule == "unread" else q.found.canonical())
        for q in quantities
    ]


@pytest.mark.parametrize("case", CASES, ids=[c["s"][:50] for c in CASES])
def test_sentence(case: dict[str, Any]) -> None:
    assert found(case["s"]) == case["q"]


def test_table_is_large_and_distinct() -> None:
    sentences = [c["s"] for c in CASES]
    assert len(sentences) >= 150
    assert len(set(sentences)) == len(sentences)


def test_every_rule_has_a_sentence() -> None:
    seen: set[str] = set()
    ids: set[str] = set()
    for case in CASES:
        quantities, _ = extract(case["s"])
        for q in quantities:
            seen.add(q.found.rule)
            if q.found.relation:
                seen.add("relation")
            if q.found.approx:
                seen.add("approximation")
        ids.update(name for _s, _e, name in identifier_spans(case["s"]))
    assert set(GRAMMAR_RULES) - seen == set()
    assert {r.name for r in IDENTIFIER_RULES} - ids == set()
