"""Mutation test: every bound number in every answer (the repo's and the claims case's), changed, must fail
the check at its own position. Bound in-process against the recorded values; scripts run once each."""

from __future__ import annotations

from collections import Counter

from qbank.claims import check_answer_text
from qbank.claims.mutate import MutationResult, mutants, mutate_answer
from qbank.problems import Level

from .conftest import RecordedAnswer


def test_every_answer_binds_every_number(recorded_answers: list[RecordedAnswer]) -> None:
    assert recorded_answers, "no answers found"
    for a in recorded_answers:
        assert a.values is not None, f"{a.path}: its script wrote no record"
        result = check_answer_text(a.slug, a.path, a.text, a.values)
        errors = [p.text() for p in result.problems if p.level is Level.ERROR]
        assert errors == [], "\n".join(errors)
        assert result.summary()["unbound"] == 0


def test_mutation_score_is_100_percent(recorded_answers: list[RecordedAnswer]) -> None:
    total = MutationResult()
    ops: Counter[str] = Counter()
    for a in recorded_answers:
        assert a.values is not None
        total.add(mutate_answer(a.slug, a.path, a.text, a.values))
        quantities = check_answer_text(a.slug, a.path, a.text, a.values).bindings
        ops.update(m.op for b in quantities if b.status == "bound" for m in mutants(a.text, b.quantity))
    survivors = [f"{m.line}:{m.col} {m.op} {m.before} -> {m.after}" for m in total.survived]
    assert total.total >= 80 and set(ops) == {"scale", "digit", "unit"}
    assert total.score == 1.0, f"mutation score {total.killed}/{total.total}; survived:\n" + "\n".join(survivors)


def test_a_mutant_is_killed_at_the_numbers_position() -> None:
    from qbank.claims.bind import Declared

    values = [Declared("kv", "claim", 320 * 2**30, "B", 3)]
    text = "## Numbers\n\nThe request needs 320 GiB of cache.\n"
    (scale, digit, unit) = mutants(text, check_answer_text("a", "answers/a.md", text, values).bindings[0].quantity)
    assert (scale.after, digit.after, unit.after) == ("480", "420", "GB")
    for m in (scale, digit, unit):
        problems = check_answer_text("a", "answers/a.md", m.text, values).problems
        assert [(p.line, p.col, p.code) for p in problems if p.level is Level.ERROR] == [(3, 19, "claim-unbound")]


def test_comparatives_are_mutated_towards_false() -> None:
    from qbank.claims.bind import Declared

    values = [Declared("share", "claim", 0.93, "fraction", 3), Declared("t", "claim", 0.4, "ms", 4)]
    text = "over 90% of FLOPs, under 1 ms per step\n"
    bindings = check_answer_text("a", "answers/a.md", text, values).bindings
    assert [m.after for m in mutants(text, bindings[0].quantity)] == ["135", "100", "×"]
    assert [m.after for m in mutants(text, bindings[1].quantity)] == ["0.666667", "0", "us"]
    result = mutate_answer("a", "answers/a.md", text, values)
    assert result.score == 1.0
