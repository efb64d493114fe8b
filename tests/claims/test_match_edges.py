"""qbank.claims.match at the edges its tables do not reach: negative numbers and zero on either side of the
comparison window, dimensions that sort after "number", and the float tolerance of the precision rules taken
to its last bit. Expectations are the module's rules worked by hand (its docstring), not recomputed."""

from __future__ import annotations

import dataclasses
import math

import pytest

from qbank.claims.match import Declared, comparable, compatible, distance, matches, near, shown
from qbank.claims.quantity import Reading


def plain(mantissa: float, step: float = 1.0) -> Reading:
    return Reading(mantissa, step, 1.0, "number", "")


def value(x: float, unit: str | None = None) -> Declared:
    return Declared("x", "claim", x, unit, 1)


@pytest.mark.parametrize(
    ("w", "v", "ok"),
    [
        (-2, -1, True),  # a factor of 2 between two negative numbers: near, whichever is written
        (-1, -2, True),
        (-1, -10, True),
        (-1, -10.01, False),
        (-8, 0, False),  # zero is near only zero, on the negative side too (log10(0) is never taken)
        (0, -8, False),
        (0, -1, False),
        (-1, 0, False),
    ],
)
def test_near_with_negative_numbers_and_zero(w: float, v: float, ok: bool) -> None:
    assert near(plain(w), value(v)) is ok


@pytest.mark.parametrize(
    ("qdim", "vdim"),
    [
        ("time", "tokens"),  # dimensions that sort after "number" are still not a bare number
        ("tokens", "layers"),  # a count is not compared with another count
        ("percent", "GPUs"),
        ("fraction", "heads"),
    ],
)
def test_only_a_bare_number_is_compared_with_a_count(qdim: str, vdim: str) -> None:
    assert not comparable(qdim, vdim)
    assert comparable("number", vdim)


# The precision rules compare with a float tolerance (1e-9 of the larger number). Each value below makes the
# difference equal to the bound plus that tolerance to the last bit (found by stepping through neighbouring
# floats): the bound is inclusive, so the value still backs the number. The assertions before each check the
# arithmetic the rule makes, written out here.


def test_half_a_step_plus_the_tolerance_is_still_inside() -> None:
    w, v = 21.0, 21.5000000215  # "21" is written to the unit: ±0.5
    assert abs(v - w) == 1 / 2 + 1e-9 * v
    assert matches(plain(w), value(v))
    assert not matches(plain(w), value(math.nextafter(v, math.inf)))


def test_five_percent_plus_the_tolerance_is_still_inside() -> None:
    w, v = 5e6, 5263157.900277008  # "5000000" is written to the million: ±500000, so the 5% cap decides
    assert abs(v - w) == 0.05 * v + 1e-9 * v and abs(v - w) < 1e6 / 2
    assert matches(plain(w, 1e6), value(v))
    assert not matches(plain(w, 1e6), value(math.nextafter(v, math.inf)))


def test_a_declared_value_cannot_be_changed_once_read() -> None:
    d = Declared("kv", "claim", 40.0, "GiB", 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.value = 41.0  # type: ignore[misc]
    assert {d, Declared("kv", "claim", 40.0, "GiB", 3)} == {d}  # hashable, by value


def test_dimensions_compare_by_value_not_identity() -> None:
    # dimension names read from a record or built at run time are equal strings, not the same objects
    time, number, factor = "".join(["ti", "me"]), "".join(["num", "ber"]), "".join(["fac", "tor"])
    assert compatible(time, "time") and compatible("time", time)
    assert compatible(factor, number) and compatible("factor", number) and compatible(number, "tokens")
    assert comparable(number, "tokens") and comparable(time, "time")


def test_a_written_zero_without_a_precision_allows_half_a_unit() -> None:
    zero = Reading(0, math.inf, 1.0, "number", "")
    assert matches(zero, value(0.4)) and matches(zero, value(-0.5))
    assert not matches(zero, value(0.6))


@pytest.mark.parametrize(
    ("v", "text"),
    [
        (1.5e-10, "1.5e-10"),  # an exponent ending in 0 is not stripped like a trailing decimal zero
        (2.5e20, "2.5e+20"),
        (1.5, "1.5"),
    ],
)
def test_shown_in_scientific_notation_keeps_its_exponent(v: float, text: str) -> None:
    assert shown(Reading(0, 1, 1.0, "number", ""), value(v)) == text


@pytest.mark.parametrize(("qdim", "vdim"), [("factor", "time"), ("fraction", "tokens"), ("factor", "percent")])
def test_a_factor_or_fraction_reading_binds_no_dimension_sorting_after_number(qdim: str, vdim: str) -> None:
    assert not compatible(qdim, vdim)
    assert compatible(qdim, "number")


def test_the_approximation_words_compare_by_value() -> None:
    about, order = "".join(["ab", "out"]), "".join(["or", "der"])
    assert matches(plain(100), value(109), about) and not matches(plain(100), value(109))
    assert matches(plain(100), value(300), order) and not matches(plain(100), value(300), about)


def test_a_written_zero_allows_exactly_half_its_step() -> None:
    assert matches(plain(0), value(0.5)) and matches(plain(0), value(-0.5))
    assert matches(Reading(0, 0.1, 1.0, "number", ""), value(0.05)) and not matches(plain(0), value(0.51))


@pytest.mark.parametrize(
    ("w", "far", "v"), [(0.97, 0.94, 1.0), (-0.97, -0.94, -1.0), (1.03, 1.06, 1.0), (-1.03, -1.06, -1.0)]
)
def test_the_relative_cap_alone_at_a_value_of_one(w: float, far: float, v: float) -> None:
    # a reading without a written precision (step inf, as "a third") is held to 5% only: 3% off backs it, 6% not
    assert matches(Reading(w, math.inf, 1.0, "number", ""), value(v))
    assert not matches(Reading(far, math.inf, 1.0, "number", ""), value(v))


def test_ten_percent_plus_the_tolerance_is_still_about() -> None:
    w, v = 3.0, 3.333333337037037  # "about 3": 10% of the value
    assert abs(v - w) == 0.10 * v + 1e-9 * v
    assert matches(plain(w), value(v), "about")
    assert not matches(plain(w), value(math.nextafter(v, math.inf)), "about")


def test_shown_counts_the_digits_of_the_number_as_written_with_its_suffix() -> None:
    # "2K tokens" is 2000 tokens written to four digits: five significant are shown, not four
    assert shown(Reading(2, 1, 1e3, "tokens", "tokens", 1e3), value(2047.7, "tokens")) == "2047.7 tokens"


def test_shown_keeps_the_zeros_of_a_whole_number() -> None:
    assert shown(Reading(0, 1, 1.0, "number", ""), value(320)) == "320"
    assert shown(plain(2000), value(2000)) == "2000"


@pytest.mark.parametrize(("w", "v"), [(-5, 0), (0, -1), (5, 0), (0, 1)])
def test_zero_is_infinitely_far_from_any_other_number(w: float, v: float) -> None:
    assert distance(plain(w), value(v)) == math.inf
