"""Binding rules: units, precision, approximations, comparatives, ranges, markers and their problems."""

from __future__ import annotations

import pytest

from qbank.claims import AnswerClaims, Declared, check_answer_text
from qbank.problems import Level

GIB = 2**30


def v(name: str, value: float, unit: str | None = None, kind: str = "claim", line: int = 3) -> Declared:
    return Declared(name, kind, value, unit, line)


def run(md: str, *values: Declared) -> AnswerClaims:
    return check_answer_text("a", "answers/a.md", md, list(values))


def codes(result: AnswerClaims, level: Level | None = Level.ERROR) -> list[tuple[int, int, str]]:
    return [(p.line, p.col, p.code) for p in result.problems if level is None or p.level is level]


def statuses(result: AnswerClaims) -> list[str]:
    return [b.status for b in result.bindings]


@pytest.mark.parametrize(
    ("md", "value"),
    [
        ("needs 320 GiB", v("kv", 327_680 * 2**20, "B")),
        ("needs 305 GiB", v("kv", 10**6 * 327_680, "B")),
        ("needs 343.6 GB", v("kv", 320 * GIB, "B")),
        ("needs 320 GiB", v("kv", 320, "GiB")),
        ("acceptance is 92%", v("acc", 0.92, "fraction")),
        ("acceptance is 92%", v("acc", 92, "%")),
        ("acceptance is 92%", v("acc", 0.92)),
        ("acceptance is 0.92", v("acc", 0.92, "fraction")),
        ("acceptance is 0.92", v("acc", 92, "%")),
        ("a 1.8× speedup", v("speedup", 1.8, "x")),
        ("a 1.8× speedup", v("speedup", 1.8)),
        ("on 8 GPUs", v("gpus", 8, "GPUs")),
        ("a 1M-token window", v("ctx", 2**20, "tokens")),
        ("a 1M-token window", v("ctx", 10**6, "tokens")),
        ("a 2K-token prompt", v("prompt", 2048, "tokens")),
        ("a 70B model", v("params", 70.6e9, "params")),
        ("the 405B target", v("params", 405.85e9, "params")),  # model sizes are named by truncation
        ("an 8B draft", v("params", 8.03e9, "params")),
        ("lasts 20.1 days", v("wear", 20.1, "day")),
        ("eighty layers", v("layers", 80, "layers")),
        ("half the layers", v("share", 0.5, "fraction")),
        ("twice the memory", v("ratio", 2, "x")),
        ("a third of the time", v("share", 0.3333, "fraction")),
        ("0.34 of it", v("x", 0.3449)),
        ("3.35 TB/s", v("bw", 3.35e12, "B/s")),
        ("400 Gb/s links", v("nic", 50, "GB/s")),
        ("5 ms per step", v("t", 0.005, "s")),
        ("5 ms per step", v("t", 5000, "us")),
        ("about 100 ms", v("t", 102.6, "ms")),
        ("roughly 300 GB", v("w", 329e9, "B")),
        ("on the order of 1 ms", v("t", 2.5, "ms")),
        ("a 4:1 ratio", v("group", 4, "x")),
        ("1 in 8 drafts", v("reject", 0.125, "fraction")),
        ("under one percent", v("share", 0.003, "fraction")),
        ("over 90% of FLOPs", v("share", 0.93, "fraction")),
        ("at least 2 replicas", v("replicas", 2, "replicas")),
        ("TP = 4 here", v("tp", 4, "GPUs")),  # a bare number binds to any count
        ("4 prefill instances", v("inst", 4, "instances")),
        ("2 H100 nodes", v("n", 2, "nodes")),
        ("up to 8 GPUs", v("gpus", 8, "GPUs")),
        ("90% or more", v("share", 0.95, "fraction")),
        (
            "9 heads of 128 dims",
            v("heads", 9, "heads"),
        ),
    ],
)
def test_matches(md: str, value: Declared) -> None:
    result = run(md, value, v("head_dim", 128, "dims"))
    assert codes(result) == [], result.problems
    assert statuses(result)[0] == "bound"
    assert value in result.bindings[0].values


@pytest.mark.parametrize(
    ("md", "value", "code"),
    [
        ("the share is 0.3", v("share", 0.34), "claim-unbound"),  # rounds, but 12% off a short number
        ("needs 320 GB", v("kv", 320 * GIB, "B"), "claim-unbound"),  # GiB is not GB
        ("needs 330 GiB", v("kv", 320 * GIB, "B"), "claim-unbound"),
        ("needs 300 GiB", v("kv", 327.68 * GIB, "B"), "claim-unbound"),  # rounds to 300, 8.4% off
        ("on 8 GPUs", v("heads", 8, "heads"), "claim-unbound"),  # counts of different things
        ("needs 320", v("kv", 320 * GIB, "B"), "claim-unbound"),  # a plain number is not bytes
        ("about 0.3", v("share", 0.34), "claim-unbound"),  # 'about' allows 10%, not 12%
        ("over 90% of FLOPs", v("share", 0.88, "fraction"), "claim-comparative"),
        ("under 1 ms", v("t", 1.2, "ms"), "claim-comparative"),
        ("at least 4 replicas", v("replicas", 3, "replicas"), "claim-comparative"),
        ("on 8 GPUs", v("gpus", 8), "claim-unbound"),  # a count needs a value declared in its noun
        ("needs four H100 nodes", v("inst", 4, "instances"), "claim-unbound"),
        ("at least 2 replicas", v("replicas", 3), "claim-unbound"),
        ("85–90% of the time", v("lo", 0.85, "fraction"), "claim-unbound"),  # the high end binds nothing
        ("a 2× speedup", v("speedup", 2.3, "x"), "claim-unbound"),
        ("a 9B draft", v("params", 8.03e9, "params"), "claim-unbound"),
    ],
)
def test_rejects(md: str, value: Declared, code: str) -> None:
    result = run(md, value)
    assert [c for _l, _c, c in codes(result)] == [code], result.problems
    assert not result.bindings[0].ok


def test_unbound_shows_the_closest_values_at_the_written_precision() -> None:
    result = run("the cache needs 300 GiB", v("kv", 327.68 * GIB, "B"), v("w", 141e9, "B"), v("n", 8))
    (problem,) = [p for p in result.problems if p.level is Level.ERROR]
    assert (problem.line, problem.col, problem.code) == (1, 17, "claim-unbound")
    assert "closest: kv = 327.7 GiB, w = 131.3 GiB" in problem.message


def test_plain_number_hint_names_the_unit_to_write() -> None:
    result = run("it is 327,680 per token", v("per_token", 327_680, "B"))
    assert "write its unit: per_token is 327680 B" in result.problems[0].message


def test_ranges_bind_both_ends() -> None:
    result = run("85–90% of the time", v("lo", 0.85, "fraction"), v("hi", 0.9, "fraction"))
    assert codes(result) == []
    assert [x.name for x in result.bindings[0].values] == ["lo", "hi"]


def test_same_number_under_two_names_is_not_ambiguous() -> None:
    result = run("8 of them", v("kv_heads", 8, "heads"), v("tp", 8, "GPUs"))
    assert codes(result, None) == []
    assert result.used == {"kv_heads", "tp"}


def test_two_different_numbers_that_both_match_are_ambiguous() -> None:
    result = run("about 40 GiB", v("a", 40.2 * GIB, "B"), v("b", 39.7 * GIB, "B"))
    assert codes(result, Level.WARNING) == [(1, 7, "claim-ambiguous"), (3, 1, "claim-unused")]
    assert statuses(result) == ["ambiguous"]


def test_an_exact_match_wins_over_a_rounded_one() -> None:
    result = run("40 GiB", v("exact", 40 * GIB, "B"), v("near", 40.3 * GIB, "B"))
    assert [p.code for p in result.problems] == ["claim-unused"]  # 'near' is never stated
    assert [x.name for x in result.bindings[0].values] == ["exact"]


def test_explicit_marker_binds_and_checks() -> None:
    values = (v("a", 40 * GIB, "B"), v("b", 40.2 * GIB, "B"))
    assert codes(run("40 GiB{=b} here", *values)) == []
    result = run("the cache is 42 GiB{=b} here", *values)
    assert codes(result) == [(1, 14, "claim-mismatch")]
    assert "b = 40.2 GiB" in result.problems[0].message


def test_explicit_comparative_must_hold() -> None:
    result = run("over 95%{=share}", v("share", 0.93, "fraction"))
    assert codes(result) == [(1, 6, "claim-comparative")]


def test_marker_problems() -> None:
    values = (v("kv", 320 * GIB, "B"),)
    assert codes(run("320 GiB{=kv_bytes}", *values)) == [(1, 1, "claim-marker-unknown")]
    assert codes(run("320 GiB{=}", *values)) == [(1, 1, "claim-marker-malformed")]
    assert codes(run("five engineers{!}", *values)) == [(1, 1, "claim-exempt-no-reason")]
    assert codes(run("the cache{=kv} is big", *values)) == [(1, 10, "claim-marker-orphan")]
    assert codes(run("4–8 GPUs{=kv}", *values)) == [(1, 1, "claim-marker-malformed")]


def test_exemptions_are_counted_with_their_reason() -> None:
    result = run("a team of five engineers{!a count in a story}", v("x", 1))
    assert statuses(result) == ["exempt"]
    assert result.bindings[0].reason == "a count in a story"
    assert result.summary() == {"quantities": 1, "bound": 0, "exempt": 1, "unbound": 0}


def test_unused_claims_warn_at_the_script_line_and_givens_do_not() -> None:
    result = run("80 layers", v("layers", 80, "layers", "given"), v("kv", 1, "B", line=12), v("n", 3, kind="given"))
    assert [(p.path, p.line, p.code, p.level) for p in result.problems] == [
        ("verify/a.py", 12, "claim-unused", Level.WARNING)
    ]


def test_no_record_is_one_problem_not_many() -> None:
    result = check_answer_text("a", "answers/a.md", "8 GPUs, 80 layers and 320 GiB, five{!story}", None)
    assert [(p.line, p.col, p.code) for p in result.problems] == [(1, 1, "claims-unverified")]
    assert statuses(result) == ["unverified", "unverified", "unverified", "exempt"]
    assert not result.verified


def test_positions_are_the_numbers_own() -> None:
    md = "## The numbers\n\nThe cache is large:\nit needs **320 GiB** and `7` is code and then 12 GB.\n"
    result = run(md, v("kv", 320 * GIB, "B"))
    assert codes(result) == [(4, 47, "claim-unbound")]


def test_a_count_never_binds_to_another_noun_or_to_no_unit_and_says_what_to_declare() -> None:
    result = run("it needs 4 nodes", v("h100_prefill_instances", 4, "instances"))
    (problem,) = [p for p in result.problems if p.level is Level.ERROR]
    assert problem.code == "claim-unbound"
    assert "h100_prefill_instances = 4 is declared in instances" in problem.message
    assert "unit='nodes'" in problem.message
    plain = run("it needs 4 nodes", v("h100_nodes", 4))
    assert "h100_nodes = 4 is declared without a unit" in plain.problems[0].message
    explicit = run("it needs 4 nodes{=h100_prefill_instances}", v("h100_prefill_instances", 4, "instances"))
    assert codes(explicit) == [(1, 10, "claim-mismatch")]
    assert "a count binds only to a value declared in its own noun (unit='nodes')" in explicit.problems[0].message
    # a bare number names no noun: it binds to the count value, and a count in the right noun binds too
    assert codes(run("a fan-in of 4 here", v("fan_in", 4, "nodes"))) == []
    assert codes(run("4 prefill nodes", v("fan_in", 4, "nodes"))) == []
