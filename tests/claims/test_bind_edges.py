"""Binding at the edges its other tests leave open: each case's expected problem is written out by hand from
docs/claims.md's rules (which value is nearest, how many numbers a marker must name), not taken from the code."""

from __future__ import annotations

from qbank.claims import AnswerClaims, Declared, check_answer_text
from qbank.claims.bind import bind_answer
from qbank.claims.extract import extract
from qbank.problems import Level


def v(name: str, value: float, unit: str | None = None) -> Declared:
    return Declared(name, "claim", value, unit, 3)


def run(md: str, *values: Declared) -> AnswerClaims:
    return check_answer_text("a", "answers/a.md", md, list(values))


def errors(result: AnswerClaims) -> list[tuple[str, str]]:
    return [(p.code, p.message) for p in result.problems if p.level is Level.ERROR]


def test_a_comparative_that_holds_for_no_value_names_the_nearest_not_the_first() -> None:
    # "over 90%": 80 % and 88 % are both nearby and neither is over 90 %; 88 % is the nearer (listed second)
    result = run("over 90% of FLOPs", v("far", 0.80, "fraction"), v("near", 0.88, "fraction"))
    assert errors(result) == [
        ("claim-comparative", '"90%" does not hold for any verified value nearby (closest: near = 88 %)')
    ]
    assert [(b.status, [x.name for x in b.values]) for b in result.bindings] == [("comparative", ["near"])]


def test_a_marker_naming_more_values_than_the_number_has_ends_is_malformed() -> None:
    values = (v("a", 8, "GiB"), v("b", 9, "GiB"))
    assert errors(run("it needs 8 GiB{=a,b}", *values)) == [
        ("claim-marker-malformed", '"8 GiB" has 1 number(s) but the marker names 2')
    ]
    assert errors(run("it needs 8–9 GiB{=a}", *values)) == [
        ("claim-marker-malformed", '"8–9 GiB" has 2 number(s) but the marker names 1')
    ]


def test_why_a_number_is_held_is_read_by_value() -> None:
    # the reason a number is held, built at run time (not the literal "quoted" of held.py), still says quoted
    md = "it needs 4 nodes"
    quantities, orphans = extract(md)
    (q,) = quantities
    held = {(q.line, q.col): "".join(["quo", "ted"])}
    result = bind_answer("a", "answers/a.md", quantities, orphans, [v("n", 4, "nodes")], held=held)
    assert [(p.code, p.message) for p in result.problems if p.level is Level.ERROR] == [
        (
            "claim-quoted",
            '"4 nodes" is quoted: such a number is never bound automatically (it would bind to n = 4 nodes); '
            "bind it with {=name} if the answer confirms it, or exempt it with a reason: {!why}",
        )
    ]


COUNT_RULE = "a count binds only to a value declared in its own noun (unit='tokens')"


def test_a_count_with_a_suffix_is_told_the_unit_of_the_value_its_decimal_reading_matches() -> None:
    # "2.00K tokens" is 2000 ± 5 read decimally (first) and 2048 ± 5.12 binary: 2000 declared without a unit is
    # the decimal reading, so the hint names it
    result = run("the batch holds 2.00K tokens", v("batch", 2000))
    assert errors(result) == [
        (
            "claim-unbound",
            f'"2.00K tokens" is not backed by a verified value (batch = 2000 is declared without a unit; {COUNT_RULE})',
        )
    ]


def test_a_count_with_a_suffix_is_matched_for_its_hint_at_the_precision_written() -> None:
    # "11K tokens" is 11000 to the nearest thousand (± 500, and within 5%): 11400 declared without a unit is it,
    # 11500.25 is past half a thousand
    assert errors(run("the batch holds 11K tokens", v("batch", 11_400))) == [
        (
            "claim-unbound",
            f'"11K tokens" is not backed by a verified value (batch = 11400 is declared without a unit; {COUNT_RULE})',
        )
    ]
    assert errors(run("the batch holds 11K tokens", v("batch", 11_500.25))) == [
        (
            "claim-unbound",
            '"11K tokens" is not backed by a verified value (no verified value of dimension tokens; values are in: '
            "number)",
        )
    ]


def test_a_number_with_a_unit_that_sorts_before_number_is_never_told_to_write_a_unit() -> None:
    # 92 GB (bytes) and 92% (fraction) carry a unit of their own: no "write its unit" hint, only the dimensions
    assert errors(run("it takes 92 GB", v("acc", 92, "%"))) == [
        (
            "claim-unbound",
            '"92 GB" is not backed by a verified value (no verified value of dimension bytes; values are in: fraction)',
        )
    ]
    assert errors(run("it is 92%", v("n", 92, "nodes"))) == [
        (
            "claim-unbound",
            '"92%" is not backed by a verified value (no verified value of dimension fraction; values are in: nodes)',
        )
    ]
