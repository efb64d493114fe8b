"""Which dimensions may bind, which may be compared, and the comparison window: the rules of
qbank.claims.match written out as tables (by hand, from its docstring), not recomputed."""

from __future__ import annotations

import math

import pytest

from qbank.claims.match import Declared, comparable, compatible, distance, holds, near
from qbank.claims.quantity import Reading

COMPATIBLE = [
    ("bytes", "bytes", True),
    ("time", "time", True),
    ("tokens", "tokens", True),
    ("number", "number", True),
    ("number", "tokens", True),  # a plain number with a count
    ("number", "factor", True),
    ("number", "fraction", True),
    ("GPUs", "number", False),  # a written count never binds a value declared without its noun
    ("factor", "number", True),
    ("fraction", "number", True),
    ("number", "bytes", False),
    ("number", "time", False),
    ("bytes", "number", False),
    ("time", "number", False),
    ("GPUs", "heads", False),  # counts of different things
    ("GPUs", "time", False),
    ("tokens", "time", False),
    ("layers", "bytes", False),
    ("fraction", "factor", False),
    ("bytes", "time", False),
]


@pytest.mark.parametrize(("qdim", "vdim", "ok"), COMPATIBLE, ids=[f"{q}-{v}" for q, v, _ in COMPATIBLE])
def test_compatible(qdim: str, vdim: str, ok: bool) -> None:
    assert compatible(qdim, vdim) is ok


COMPARABLE = [
    ("bytes", "bytes", True),
    ("number", "tokens", True),
    ("tokens", "number", False),  # nor is it compared with one
    ("number", "number", True),
    ("number", "factor", False),  # a comparative binds more narrowly than a plain match
    ("factor", "number", False),
    ("number", "fraction", False),
    ("GPUs", "heads", False),
    ("bytes", "time", False),
]


@pytest.mark.parametrize(("qdim", "vdim", "ok"), COMPARABLE, ids=[f"{q}-{v}" for q, v, _ in COMPARABLE])
def test_comparable(qdim: str, vdim: str, ok: bool) -> None:
    assert comparable(qdim, vdim) is ok


def plain(mantissa: float) -> Reading:
    return Reading(mantissa, 1.0, 1.0, "number", "")


def value(x: float, unit: str | None = None) -> Declared:
    return Declared("x", "claim", x, unit, 1)


@pytest.mark.parametrize(
    ("w", "v", "ok"),
    [
        (8, 80, True),  # a factor of 10 exactly: inside the window
        (8, 80.01, False),
        (8, 0.8, True),
        (8, 0.7999, False),
        (8, 8, True),
        (8, -8, False),  # opposite signs are never near
        (-8, -80, True),
        (0, 0, True),
        (0, 8, False),
        (8, 0, False),
    ],
)
def test_near_is_a_factor_of_ten_either_way(w: float, v: float, ok: bool) -> None:
    assert near(plain(w), value(v)) is ok


def test_near_needs_compatible_dimensions() -> None:
    assert not near(plain(8), value(8, "s"))
    assert near(Reading(8, 1.0, 1.0, "time", "s"), value(8, "s"))


@pytest.mark.parametrize(
    ("v", "gt", "ge", "lt", "le"),
    [
        (1.0, False, True, False, True),  # equality
        (1.0 + 1e-12, False, True, False, True),  # within the float tolerance: still equality
        (1.001, True, True, False, False),
        (0.999, False, False, True, True),
    ],
)
def test_holds_each_relation(v: float, gt: bool, ge: bool, lt: bool, le: bool) -> None:
    got = [holds(plain(1.0), value(v), rel) for rel in (">", ">=", "<", "<=")]
    assert got == [gt, ge, lt, le]


def test_distance_is_the_log_ratio() -> None:
    assert distance(plain(10), value(100)) == pytest.approx(math.log(10))
    assert distance(plain(10), value(1)) == pytest.approx(math.log(10))
    assert distance(plain(10), value(10)) == 0.0
    assert distance(plain(10), value(-10)) == math.inf
    assert distance(plain(0), value(0)) == 0.0 and distance(plain(0), value(1)) == math.inf


GIB = 2**30


@pytest.mark.parametrize(
    ("reading", "v", "text"),
    [
        # one digit past the written precision, at least four significant digits, in the written unit
        (Reading(320, 10, GIB, "bytes", "GiB"), value(327.68 * GIB, "B"), "327.7 GiB"),
        (Reading(0.92, 0.01, 1.0, "number", ""), value(0.92513), "0.9251"),
        (Reading(1.805, 0.001, 1.0, "factor", "×"), value(1.80549), "1.8055 ×"),
        (Reading(5, 1, 1.0, "number", ""), value(5.0), "5"),  # no trailing zeros or point
        (Reading(2, 1, 1e3, "tokens", "tokens", 1e3), value(2048, "tokens"), "2048 tokens"),  # "2K tokens"
        (Reading(0, 1, 1.0, "number", ""), value(2e-16), "2e-16"),
    ],
)
def test_shown_in_the_written_unit(reading: Reading, v: Declared, text: str) -> None:
    from qbank.claims.match import shown

    assert shown(reading, v) == text


def test_on_the_order_of_includes_exactly_root_ten() -> None:
    from qbank.claims.match import matches

    # log10(10 ** ±0.5) is exactly ±0.5 in floating point: the factor √10 itself is inside
    assert matches(plain(1), value(10**0.5), "order") and matches(plain(1), value(10**-0.5), "order")
    assert not matches(plain(1), value(3.17), "order") and not matches(plain(1), value(0.315), "order")


def test_a_zero_value_backs_no_nonzero_number() -> None:
    from qbank.claims.match import matches

    assert not matches(plain(5), value(0)) and not matches(Reading(0.1, 0.1, 1.0, "number", ""), value(0))
    assert matches(plain(0), value(0)) and matches(plain(0), value(0.4)) and not matches(plain(0), value(0.6))


@pytest.mark.parametrize(("w", "v"), [(-0.5, 0.5), (0.5, -0.5), (-10, 10), (10, -10)])
def test_opposite_signs_are_never_near_and_infinitely_far(w: float, v: float) -> None:
    assert not near(plain(w), value(v))
    assert distance(plain(w), value(v)) == math.inf


def test_distance_of_negative_numbers() -> None:
    assert distance(plain(-2), value(-1)) == pytest.approx(math.log(2))
    assert distance(plain(-1), value(-2)) == pytest.approx(math.log(2))


def test_a_declared_value_from_its_record() -> None:
    d = Declared.from_record({"name": "kv", "value": 40, "unit": "GiB"})
    assert d == Declared("kv", "claim", 40.0, "GiB", 0)  # kind claim and line 0 when the record has none
    assert Declared.from_record({"name": "n", "kind": "given", "value": "8", "line": 12}) == Declared(
        "n", "given", 8.0, None, 12
    )


def test_order_of_magnitude_needs_positive_numbers() -> None:
    from qbank.claims.match import matches

    for w, v in [(1, 0), (0, 1), (1, -1), (-1, 1), (-1, -1)]:
        assert not matches(plain(w), value(v), "order"), (w, v)


def test_negative_numbers_round_like_positive_ones() -> None:
    from qbank.claims.match import matches

    assert matches(plain(-5), value(-5.2))  # within half a step and 5% of 5.2
    assert not matches(plain(-5), value(-5.4))  # within half a step, but 7.4% off


def test_comparisons_at_zero() -> None:
    assert [holds(plain(0), value(0), rel) for rel in (">", ">=", "<", "<=")] == [False, True, False, True]


def test_near_for_small_positive_numbers() -> None:
    assert near(plain(0.5), value(0.5)) and near(plain(0.5), value(4.9)) and distance(plain(1), value(2)) == (
        pytest.approx(math.log(2))
    )


def test_shown_with_a_magnitude_suffix() -> None:
    from qbank.claims.match import shown

    # "1.805K tokens" against 1805.49 tokens: 1805 has four digits, so five significant are shown
    assert shown(Reading(1.805, 0.001, 1e3, "tokens", "tokens", 1e3), value(1805.49, "tokens")) == "1805.5 tokens"
