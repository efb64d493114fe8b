"""What a binding problem says, word for word: which end of a range failed, the unit a count must be declared
in when written with a magnitude suffix, and a problem's level given by value. The messages are written out
here by hand from docs/claims.md's rules, not taken from the code."""

from __future__ import annotations

import dataclasses
import json

from qbank.claims import AnswerClaims, Declared, check_answer_text
from qbank.claims.bind import Binder, Binding, _unit_hint, bind_answer
from qbank.claims.quantity import Reading
from qbank.problems import Level


def v(name: str, value: float, unit: str | None = None) -> Declared:
    return Declared(name, "claim", value, unit, 3)


def run(md: str, *values: Declared) -> AnswerClaims:
    return check_answer_text("a", "answers/a.md", md, list(values))


def messages(result: AnswerClaims) -> list[tuple[Level, str, str]]:
    return [(p.level, p.code, p.message) for p in result.problems if p.level is Level.ERROR]


def test_a_range_names_the_end_that_is_not_backed() -> None:
    low = run("85–90% of the time", v("hi", 0.9, "fraction"))
    assert messages(low) == [
        (
            Level.ERROR,
            "claim-unbound",
            '"85–90%" (its low end) is not backed by a verified value (closest: hi = 90 %)',
        )
    ]
    high = run("85–90% of the time", v("lo", 0.85, "fraction"))
    assert messages(high) == [
        (
            Level.ERROR,
            "claim-unbound",
            '"85–90%" (its high end) is not backed by a verified value (closest: lo = 85 %)',
        )
    ]


def test_a_count_with_a_magnitude_suffix_names_the_value_declared_without_its_noun() -> None:
    # "2K tokens" is 2000 (or 2048) tokens: the value 2000 declared without a unit is the one to fix
    result = run("the batch holds 2K tokens", v("batch", 2000))
    assert messages(result) == [
        (
            Level.ERROR,
            "claim-unbound",
            '"2K tokens" is not backed by a verified value (batch = 2000 is declared without a unit; '
            "a count binds only to a value declared in its own noun (unit='tokens'))",
        )
    ]


def test_a_problems_level_is_read_by_value() -> None:
    # a level read from elsewhere (a string built at run time) is the same level as the literal
    q = run("it takes 8 GPUs", v("gpus", 8, "GPUs")).bindings[0].quantity
    binder = Binder("a", "answers/a.md", [])
    binder.problem(q, "claim-unbound", "x", level="".join(["er", "ror"]))
    binder.problem(q, "claim-ambiguous", "y", level="".join(["warn", "ing"]))
    assert [(p.level, p.line, p.col) for p in binder.result.problems] == [(Level.ERROR, 1, 10), (Level.WARNING, 1, 10)]


def test_a_held_number_says_whether_it_is_quoted_or_tested() -> None:
    values = (v("nodes", 4, "nodes"),)
    rest = (
        ": such a number is never bound automatically (it would bind to nodes = 4 nodes); bind it with {=name} "
        "if the answer confirms it, or exempt it with a reason: {!why}"
    )
    assert messages(run('Some say "it needs 4 nodes" today.', *values)) == [
        (Level.ERROR, "claim-quoted", '"4 nodes" is quoted' + rest)
    ]
    assert messages(run("Some say it needs 4 nodes.{?}", *values)) == [
        (Level.ERROR, "claim-tested", '"4 nodes" is in a sentence marked {?} as a claim being tested' + rest)
    ]


def test_the_closest_values_are_at_most_three() -> None:
    gib = 2**30
    values = [v(name, n * gib, "B") for name, n in (("a", 330), ("b", 270), ("c", 360), ("d", 240))]
    (problem,) = [p for p in run("the cache needs 300 GiB", *values).problems if p.level is Level.ERROR]
    assert problem.message == (
        '"300 GiB" is not backed by a verified value (closest: a = 330 GiB, b = 270 GiB, c = 360 GiB)'
    )


def test_an_ambiguous_binding_keeps_the_reading_of_the_closest_value() -> None:
    # "2K tokens" is 2000 or 2048 tokens; 2030 backs it as 2000 (1.5% off), 2150 only as 2048 (5% off, binary)
    result = run("the batch holds 2K tokens", v("near", 2030, "tokens"), v("far", 2150, "tokens"))
    (binding,) = result.bindings
    assert binding.status == "ambiguous" and [x.name for x in binding.values] == ["near"]
    assert binding.reading is not None and binding.reading.mult == 1000.0
    assert result.used == {"near"}  # the value bound is stated; the farther one is not


def test_the_summary_counts_statuses_by_value() -> None:
    q = run("it takes 8 GPUs", v("gpus", 8, "GPUs")).bindings[0].quantity
    result = AnswerClaims("a", "answers/a.md")
    result.bindings = [
        Binding(q, "".join(["ex", "empt"])),
        Binding(q, "".join(["bo", "und"])),
        Binding(q, "ambiguous"),
        Binding(q, "unbound"),
    ]
    assert result.summary() == {"quantities": 4, "bound": 2, "exempt": 1, "unbound": 1}


def test_the_unit_hint_reads_a_plain_dimension_by_value() -> None:
    # a reading's dimension read from elsewhere (built at run time) is still a plain number
    plain = Reading(327_680, 1, 1.0, "".join(["num", "ber"]), "")
    assert _unit_hint(plain, [v("per_token", 327_680, "B")]) == "write its unit: per_token is 327680 B"


def test_without_a_record_exempt_numbers_are_not_counted_and_marked_ones_are() -> None:
    # no verification record: every number but the exempt ones is pending, {=name} ones included
    result = check_answer_text("a", "answers/a.md", "five{!story} GPUs, 4 nodes{=n} and 80 layers", None)
    assert messages(result) == [
        (
            Level.ERROR,
            "claims-unverified",
            "2 number(s) cannot be checked: verify/a.py has no verification record; run `qbank verify a`",
        )
    ]
    assert [(p.line, p.col) for p in result.problems] == [(1, 20)]
    assert [b.status for b in result.bindings] == ["exempt", "unverified", "unverified"]


def test_one_value_backing_two_readings_of_a_suffix_is_one_binding() -> None:
    # 2010 tokens backs "2K" read as 2000 (0.5% off) and as 2048 (1.9% off): one value, so no ambiguity
    result = run("the batch holds 2K tokens", v("batch", 2010, "tokens"))
    assert result.problems == [] and [b.status for b in result.bindings] == ["bound"]


def test_the_same_value_under_two_names_off_the_written_number_is_one_binding() -> None:
    gib = 2**30
    result = run("the cache needs 328 GiB", v("kv", 327.68 * gib, "B"), v("cache", 327.68 * gib, "B"))
    assert result.problems == [] and [b.status for b in result.bindings] == ["bound"]
    assert result.used == {"kv", "cache"}


def test_the_count_hint_compares_dimensions_by_value() -> None:
    # a count read as nodes, with a value declared in nodes: nothing to hint, however the name was built
    nodes = Reading(4, 1, 1.0, "".join(["no", "des"]), "nodes")
    assert _unit_hint(nodes, [v("n", 4, "nodes")]) is None
    assert _unit_hint(nodes, [v("n", 4)]) == (
        "n = 4 is declared without a unit; a count binds only to a value declared in its own noun (unit='nodes')"
    )


def test_a_marker_naming_no_identifier_is_malformed() -> None:
    result = run("it takes 8 GPUs{=9gpus}", v("gpus", 8, "GPUs"))
    assert messages(result) == [(Level.ERROR, "claim-marker-malformed", "'{=9gpus}' must name a value: {=name}")]


def test_an_unknown_name_suggests_the_name_closest_to_it() -> None:
    # two unknown names in a range marker: the message is about the first, and so is its suggestion
    values = (v("kv_cache", 8 * 2**30, "B"), v("weights", 9 * 2**30, "B"))
    result = run("it needs 8–9 GiB{=kv_cach,weightz}", *values)
    assert messages(result) == [
        (
            Level.ERROR,
            "claim-marker-unknown",
            "\"8–9 GiB\" is bound to 'kv_cach', which verify/a.py does not declare (did you mean 'kv_cache'?)",
        )
    ]


def test_a_held_number_says_what_it_would_bind_to_first() -> None:
    result = run('Some say "it needs 4 nodes" today.', v("prefill", 4, "nodes"), v("decode", 4, "nodes"))
    (problem,) = [p for p in result.problems if p.level is Level.ERROR]
    assert "(it would bind to prefill = 4 nodes)" in problem.message


def test_an_ambiguous_number_names_at_most_three_values_nearest_first() -> None:
    # "about 100" is backed by each (10%); 103 is 2.96% off in log terms, 97 3.05%, 105 4.88%, 95 5.13%
    values = (v("a", 95), v("b", 97), v("c", 103), v("d", 105))
    result = run("about 100 of them", *values)
    assert [(p.level, p.code, p.message) for p in result.problems if p.code == "claim-ambiguous"] == [
        (
            Level.WARNING,
            "claim-ambiguous",
            '"100" matches different values (c = 103, b = 97, d = 105); bind it with {=c}',
        )
    ]


def test_the_closest_values_are_measured_on_the_decimal_reading() -> None:
    # "2K tokens" read as 2000: 1750 is 13.4% off in log terms and 2300 14.0%, so 1750 comes first
    result = run("the batch holds 2K tokens", v("a", 2300, "tokens"), v("b", 1750, "tokens"))
    assert messages(result) == [
        (
            Level.ERROR,
            "claim-unbound",
            '"2K tokens" is not backed by a verified value (closest: b = 1750 tokens, a = 2300 tokens)',
        )
    ]


def test_a_comparative_binds_only_values_of_its_dimension_within_the_window() -> None:
    assert [p.code for p in run("over 90% of FLOPs", v("share", 0.05, "fraction")).problems] == [
        "claim-unbound",  # the same dimension, but a factor of 18 away: not "nearby"
        "claim-unused",
    ]
    assert [p.code for p in run("over 0.5 of them", v("share", 0.6, "fraction")).problems] == [
        "claim-unbound",  # nearby and it would hold, but a bare number is not compared with a fraction
        "claim-unused",
    ]


def test_a_comparative_binds_the_nearest_value_that_holds() -> None:
    result = run("over 90% of FLOPs", v("far", 0.95, "fraction"), v("near", 0.92, "fraction"))
    assert [x.name for x in result.bindings[0].values] == ["near"]


def test_a_record_read_from_json_still_warns_of_unused_claims() -> None:
    # kinds parsed from a record are equal strings, not the literal objects of the code
    (record,) = json.loads('[{"name": "x", "kind": "claim", "value": 8, "unit": "GPUs"}]')
    result = run("no numbers here", Declared.from_record(record))
    assert [(p.level, p.code) for p in result.problems] == [(Level.WARNING, "claim-unused")]


def test_an_unread_number_is_reported_whatever_string_holds_its_rule() -> None:
    (q,) = run("it is 3x4", v("n", 3)).bindings[0:1]
    quantity = q.quantity
    unread = dataclasses.replace(quantity, found=dataclasses.replace(quantity.found, rule="".join(["un", "read"])))
    binder = Binder("a", "answers/a.md", [v("n", 3)])
    assert binder.bind(unread).status == "unread"
    assert [p.code for p in binder.result.problems] == ["claim-unread"]


def test_an_explicit_binding_keeps_its_reading_and_the_answer_is_verified() -> None:
    result = run("it needs 320 GiB{=kv}", v("kv", 320, "GiB"))
    (binding,) = result.bindings
    assert binding.status == "bound" and binding.reading is not None and binding.reading.unit == "GiB"
    assert result.verified is True


def test_a_marker_bound_to_a_value_of_another_unit_names_that_unit() -> None:
    with_unit = run("it takes 8 GiB{=t}", v("t", 8, "s"))
    assert messages(with_unit) == [
        (Level.ERROR, "claim-mismatch", '"8 GiB" is bound to t, whose unit (s) cannot express it')
    ]
    without = run("it takes 8 GiB{=n}", v("n", 8))
    assert messages(without) == [
        (Level.ERROR, "claim-mismatch", '"8 GiB" is bound to n, whose unit (none) cannot express it')
    ]


def test_a_plain_number_equal_to_a_percent_or_a_noun_value_is_told_its_unit() -> None:
    """"acceptance is 92" against acc = 92 % is the percent without its sign: say so, not "closest: 0.92"."""
    plain = Reading(92.0, 1.0, 1.0, "number", "", 1.0)
    assert _unit_hint(plain, [v("acc", 92, "%")]) == "write its unit: acc is 92 %"
    assert _unit_hint(plain, [v("acc", 0.92, "%")]) is None  # 0.92 % is not 92
    four = Reading(4.0, 1.0, 1.0, "number", "", 1.0)
    assert _unit_hint(four, [v("n", 4, "nodes")]) == "write its unit: n is 4 nodes"


def test_a_number_of_a_dimension_no_value_has_names_the_dimensions_there_are() -> None:
    result = run("it takes 5 ms", v("n", 5, "tokens"), v("kv", 5, "B"))
    assert messages(result) == [
        (
            Level.ERROR,
            "claim-unbound",
            '"5 ms" is not backed by a verified value (no verified value of dimension time; '
            "values are in: bytes, tokens)",
        )
    ]


def test_only_a_plain_number_is_told_to_write_a_unit() -> None:
    # 92 ms is not 92 %: a number written with a unit of its own gets no "write its unit" hint
    assert _unit_hint(Reading(92.0, 1.0, 1e-3, "time", "ms"), [v("acc", 92, "%")]) is None
    assert messages(run("it takes 92 ms", v("acc", 92, "%"))) == [
        (
            Level.ERROR,
            "claim-unbound",
            '"92 ms" is not backed by a verified value (no verified value of dimension time; values are in: fraction)',
        )
    ]


def test_a_plain_number_with_a_magnitude_suffix_is_told_its_unit_at_the_precision_written() -> None:
    # "11K" is 11000 to the nearest thousand (±500) and within 5% (±550 of 11000): 11400 B is it, without its unit
    eleven_k = Reading(11.0, 1.0, 1000.0, "number", "", 1000.0)
    assert _unit_hint(eleven_k, [v("cache", 11_400, "B")]) == "write its unit: cache is 11400 B"
    assert _unit_hint(eleven_k, [v("cache", 11_500.25, "B")]) is None  # 500.25 past it: not half a thousand


def test_a_value_backing_only_the_binary_reading_joins_the_group_of_its_number() -> None:
    # "2.00K" is ±5 tokens: x and w back it as 2001 (decimal), y = 2049.024 only as 2.001 × 1024 (binary);
    # all three are the same written number, so one binding, not an ambiguity
    values = (v("x", 2001, "tokens"), v("y", 2049.024, "tokens"), v("w", 2001, "tokens"))
    result = run("the batch holds 2.00K tokens", *values)
    assert result.problems == [] and [b.status for b in result.bindings] == ["bound"]
    assert result.used == {"x", "y", "w"}


def test_the_exact_group_is_exact_under_its_own_reading() -> None:
    # x is exactly 2.00K decimal and y exactly 2.00K binary (one group, exact); z = 2004 is 2.004K, not exact
    values = (v("x", 2000, "tokens"), v("y", 2048, "tokens"), v("z", 2004, "tokens"))
    result = run("the batch holds 2.00K tokens", *values)
    assert [(b.status, [x.name for x in b.values]) for b in result.bindings] == [("bound", ["x"])]
    assert result.used == {"x", "y"}


def test_an_ambiguous_number_orders_a_group_by_its_first_values_own_reading() -> None:
    # x (2001, decimal) and y (2049.024, binary) are 2.001K: 0.05% off, nearer than z = 1997 (0.15% off)
    values = (v("x", 2001, "tokens"), v("y", 2049.024, "tokens"), v("z", 1997, "tokens"))
    result = run("the batch holds 2.00K tokens", *values)
    assert [(p.level, p.code, p.message) for p in result.problems if p.code == "claim-ambiguous"] == [
        (
            Level.WARNING,
            "claim-ambiguous",
            '"2.00K tokens" matches different values (x = 2001 tokens, y = 2049 tokens, z = 1997 tokens); '
            "bind it with {=x}",
        )
    ]


def test_a_held_number_shows_the_value_it_would_bind_to_at_its_own_reading() -> None:
    # "3.3K" read as 3300 (decimal) has four digits, so the value is shown to five: 3312.3, not 3312.35
    # (the binary reading, 3379.2, would show six); y backs only the binary reading
    result = run('Some say "it holds 3.3K tokens" today.', v("x", 3312.345, "tokens"), v("y", 3379.2, "tokens"))
    (problem,) = [p for p in result.problems if p.level is Level.ERROR]
    assert "(it would bind to x = 3312.3 tokens)" in problem.message
    # the value, not the number written
    kv = run('Some say "it needs 320 GiB" today.', v("kv", 321.5, "GiB"))
    (problem,) = [p for p in kv.problems if p.level is Level.ERROR]
    assert "(it would bind to kv = 321.5 GiB)" in problem.message


def test_without_a_record_numbers_in_words_are_pending_too() -> None:
    result = check_answer_text("a", "answers/a.md", "four nodes and 80 layers", None)
    assert [b.quantity.found.rule for b in result.bindings] == ["words", "unit"]
    assert messages(result) == [
        (
            Level.ERROR,
            "claims-unverified",
            "2 number(s) cannot be checked: verify/a.py has no verification record; run `qbank verify a`",
        )
    ]


def test_without_a_record_an_unread_number_is_not_pending_whatever_string_holds_its_rule() -> None:
    quantities = check_answer_text("a", "answers/a.md", "it is 3x4 and 80 layers", None).bindings
    unread, layers = (b.quantity for b in quantities)
    assert unread.found.rule == "unread"
    rebuilt = dataclasses.replace(unread, found=dataclasses.replace(unread.found, rule="".join(["un", "read"])))
    result = bind_answer("a", "answers/a.md", [rebuilt, layers], [], None)
    assert [b.status for b in result.bindings] == ["unread", "unverified"]
    assert [(p.code, p.message) for p in result.problems if p.code == "claims-unverified"] == [
        (
            "claims-unverified",
            "1 number(s) cannot be checked: verify/a.py has no verification record; run `qbank verify a`",
        )
    ]
