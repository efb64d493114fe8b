"""Every comparative at equality, and the precision rules at exactly half a step (and just past it).

The expectations are the rules of qbank.claims.match worked by hand: "over" is strict, "at least" is not;
"320" is written to the ten, so 325 backs it and 325.01 does not; "about" allows 10% of the value.
"""

from __future__ import annotations

import pytest

from qbank.claims import Declared, check_answer_text
from qbank.problems import Level

GIB = 2**30


def outcome(md: str, value: float, unit: str | None) -> str:
    """`bound`, or the error code the sentence gets against this one value."""
    result = check_answer_text("a", "answers/a.md", md, [Declared("x", "claim", value, unit, 3)])
    errors = [p.code for p in result.problems if p.level is Level.ERROR]
    if errors:
        return errors[0]
    assert [b.status for b in result.bindings] == ["bound"]
    return "bound"


# each comparative word: the value at the written number, just above it, just below it
COMPARATIVES = [
    ("over 90% of FLOPs", ">"),
    ("more than 90% of FLOPs", ">"),
    ("above 90% of FLOPs", ">"),
    ("greater than 90% of FLOPs", ">"),
    ("in excess of 90% of FLOPs", ">"),
    ("under 90% of FLOPs", "<"),
    ("below 90% of FLOPs", "<"),
    ("less than 90% of FLOPs", "<"),
    ("at least 90% of FLOPs", ">="),
    ("no less than 90% of FLOPs", ">="),
    ("90% or more of FLOPs", ">="),
    ("at most 90% of FLOPs", "<="),
    ("up to 90% of FLOPs", "<="),
    ("no more than 90% of FLOPs", "<="),
]
HOLDS = {  # relation -> (at equality, just above, just below)
    ">": (False, True, False),
    "<": (False, False, True),
    ">=": (True, True, False),
    "<=": (True, False, True),
}


@pytest.mark.parametrize(("md", "relation"), COMPARATIVES, ids=[c[0] for c in COMPARATIVES])
def test_each_comparative_at_its_boundary(md: str, relation: str) -> None:
    # a value that fails it is claim-comparative, not unbound: the sentence is false, not unsupported
    want = ["bound" if holds else "claim-comparative" for holds in HOLDS[relation]]
    assert [outcome(md, share, "fraction") for share in (0.90, 0.905, 0.895)] == want


# equality that float arithmetic blurs: 0.07 in percent is 7.000000000000001, 0.29 is 28.999999999999996
# (checked here with the same division the conversion makes), and each is still equal to what is written
FLOAT_EQUAL = [(0.07, "7%", 7.000000000000001), (0.29, "29%", 28.999999999999996)]


@pytest.mark.parametrize(("word", "relation"), [("over", ">"), ("under", "<"), ("at least", ">="), ("at most", "<=")])
@pytest.mark.parametrize(("share", "written", "in_percent"), FLOAT_EQUAL, ids=["above", "below"])
def test_each_comparative_at_an_equality_float_arithmetic_blurs(
    word: str, relation: str, share: float, written: str, in_percent: float
) -> None:
    assert share / 0.01 == in_percent != float(written[:-1])  # the blur is real on this machine
    want = "bound" if HOLDS[relation][0] else "claim-comparative"
    assert outcome(f"{word} {written} of FLOPs", share, "fraction") == want


@pytest.mark.parametrize(
    ("md", "value", "unit", "want"),
    [
        # "320" is written to the ten: ±5 rounds to it (and lies within 5%)
        ("needs 320 GiB", 325 * GIB, "B", "bound"),
        ("needs 320 GiB", 315 * GIB, "B", "bound"),
        ("needs 320 GiB", 325.01 * GIB, "B", "claim-unbound"),
        ("needs 320 GiB", 314.99 * GIB, "B", "claim-unbound"),
        # "0.92" is written to the hundredth: ±0.005
        ("acceptance is 0.92", 0.925, None, "bound"),
        ("acceptance is 0.92", 0.915, None, "bound"),
        ("acceptance is 0.92", 0.9251, None, "claim-unbound"),
        ("acceptance is 0.92", 0.9149, None, "claim-unbound"),
        # "0.3" to the tenth would allow ±0.05, but the 5% cap binds first: 0.3 within 5% of the value
        ("the share is 0.3", 0.3157, None, "bound"),
        ("the share is 0.3", 0.316, None, "claim-unbound"),
        ("the share is 0.3", 0.2858, None, "bound"),
        ("the share is 0.3", 0.2856, None, "claim-unbound"),
        # "about" allows 10% of the value: 100 is within 10% of 111.1 and of 90.91, not of 111.2 or 90.9
        ("about 100 ms", 111.1, "ms", "bound"),
        ("about 100 ms", 111.2, "ms", "claim-unbound"),
        ("about 100 ms", 90.91, "ms", "bound"),
        ("about 100 ms", 90.9, "ms", "claim-unbound"),
        # "on the order of" allows a factor of √10 either way
        ("on the order of 1 ms", 3.16, "ms", "bound"),
        ("on the order of 1 ms", 3.17, "ms", "claim-unbound"),
        ("on the order of 1 ms", 0.317, "ms", "bound"),
        ("on the order of 1 ms", 0.316, "ms", "claim-unbound"),
    ],
)
def test_precision_at_half_a_step(md: str, value: float, unit: str | None, want: str) -> None:
    assert outcome(md, value, unit) == want
