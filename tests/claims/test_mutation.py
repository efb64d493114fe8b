"""Mutation test: every bound number in every answer (the repo's and the claims case's), changed, must fail
the check at its own position. Bound in-process against the recorded values; scripts run once each."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from qbank.claims import check_answer_text
from qbank.claims.extract import extract
from qbank.claims.lock import changes, entries, read_lock, render_changes
from qbank.claims.mutate import mutants, mutate_answer, mutate_bindings
from qbank.problems import Level

from ..conftest import REPO
from .conftest import CLAIMS_CASE, answer_slugs, recorded_answer

# the realistic claims case and every answer of the repository, one test each (xdist spreads them)
ANSWERS = [(CLAIMS_CASE, slug) for slug in answer_slugs(CLAIMS_CASE)] + [(REPO, slug) for slug in answer_slugs(REPO)]


@pytest.mark.parametrize(("root", "slug"), ANSWERS, ids=[f"{r.name}/{s}" for r, s in ANSWERS])
def test_every_number_binds_and_every_mutant_dies(root: Path, slug: str, tmp_path: Path) -> None:
    a = recorded_answer(root, slug, tmp_path)
    assert a.values is not None, f"{a.path}: its script wrote no record"
    result = check_answer_text(a.slug, a.path, a.text, a.values)
    errors = [p.text() for p in result.problems if p.level is Level.ERROR]
    assert errors == [], "\n".join(errors)
    assert result.summary()["unbound"] == 0
    locked = read_lock(root)
    if root == REPO:  # the committed lock says what every number of the repository binds to
        assert locked is not None, "claims.lock is missing: run `qbank claims --lock`"
        stale = render_changes(changes(entries([result]), locked, paths=[a.path]))
        assert stale == "", "claims.lock is stale (run `qbank claims --lock` and review):\n" + stale
    mutation = mutate_answer(a.slug, a.path, a.text, a.values)
    survivors = [
        f"{a.path}:{m.line}:{m.col} {m.op} {m.before} -> {m.after} (bind {{={m.bound}}})" for m in mutation.survived
    ]
    assert mutation.total > 0
    assert mutation.score == 1.0, f"mutation score {mutation.killed}/{mutation.total}; survived:\n" + "\n".join(
        survivors
    )
    meaning = mutate_bindings(a.slug, a.path, a.text, a.values)
    lost = [f"{a.path}:{m.line}:{m.col} {m.op} {m.before} -> {m.after}" for m in meaning.survived]
    assert meaning.score == 1.0, f"binding-mutation score {meaning.caught}/{meaning.total}:\n" + "\n".join(lost)


def test_the_claims_case_exercises_every_operator() -> None:
    text = (CLAIMS_CASE / "answers" / "kv-cache-million-tokens.md").read_text()
    ops = Counter(m.op for q in extract(text)[0] for m in mutants(text, q))
    assert set(ops) == {"scale", "digit", "unit", "scale-high", "digit-high"} and sum(ops.values()) >= 80


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


def test_survivors_are_fixed_by_binding_them_explicitly() -> None:
    from qbank.claims.bind import Declared
    from qbank.claims.mutate import bind_survivors

    values = [Declared("alpha_07", "given", 0.7, None, 3), Declared("alpha_08", "given", 0.8, None, 4)]
    text = "At an acceptance of 0.7 the ceiling is low; at 0.8 it is higher.\n"
    first = mutate_answer("a", "answers/a.md", text, values)
    assert [(m.col, m.op, m.after, m.bound) for m in first.survived] == [(21, "digit", "0.8", "alpha_07")]
    fixed = bind_survivors(text, first.survived, extract(text)[0])
    assert fixed == "At an acceptance of 0.7{=alpha_07} the ceiling is low; at 0.8 it is higher.\n"
    assert mutate_answer("a", "answers/a.md", fixed, values).score == 1.0


def test_a_repointed_binding_is_caught_by_the_lock_alone() -> None:
    from qbank.claims.bind import Declared

    values = [
        Declared("h100_nodes", "claim", 4, "nodes", 3),
        Declared("h100_prefill_nodes", "claim", 4, "nodes", 4),
        Declared("gpus", "given", 8, "GPUs", 5),
    ]
    text = "It needs 4 nodes of 8 GPUs, and 4 nodes{=h100_prefill_nodes} for prefill.\n"
    meaning = mutate_bindings("a", "answers/a.md", text, values)
    repoints = [(m.line, m.col, m.before, m.after) for m in meaning.survived]
    assert repoints == [] and meaning.repointed == 2  # one per "4 nodes", each to the other 4-node value
    assert meaning.repoint_caught == 2 and meaning.repoint_caught_without_lock == 0


def test_a_swapped_count_noun_is_caught_only_when_the_value_declares_its_noun() -> None:
    from qbank.claims.bind import Declared

    text = "It needs 4 nodes for prefill and a 2-node instance.\n"
    declared = [Declared("nodes", "claim", 4, "nodes", 3), Declared("per_instance", "claim", 2, "nodes", 4)]
    meaning = mutate_bindings("a", "answers/a.md", text, declared)
    assert (meaning.swapped, meaning.swap_caught, meaning.survived) == (2, 2, [])
    # a value without a unit cannot bind "4 nodes" at all: the count noun rule is what catches the swap
    plain = [Declared("nodes", "claim", 4, None, 3), Declared("per_instance", "claim", 2, None, 4)]
    assert [p.code for p in check_answer_text("a", "answers/a.md", text, plain).problems if p.level is Level.ERROR] == [
        "claim-unbound",
        "claim-unbound",
    ]
    # a swap that lands on another value in that noun survives: such a number must be bound explicitly
    gpus = [*declared, Declared("gpus", "given", 4, "GPUs", 5)]
    (survivor,) = mutate_bindings("a", "answers/a.md", text, gpus).survived
    assert (survivor.op, survivor.before, survivor.after, survivor.bound) == ("noun", "nodes", "GPUs", "nodes")
    fixed = text.replace("4 nodes", "4 nodes{=nodes}")
    assert mutate_bindings("a", "answers/a.md", fixed, gpus).survived == []
