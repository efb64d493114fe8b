"""Matching: when a declared value backs a written number, and the rules binding follows.

Pure functions of a reading and a value (no files, no scripts). The rules:

- **Units.** A reading and a value meet in base units; only compatible dimensions meet: the same
  dimension, or a plain number with a plain value, a plain number with a count, factor or fraction
  value, a percent with a fraction, a factor (×) with a plain value. A count (8 GPUs) binds only to a
  value declared in that count noun (:mod:`.nouns`): not another count, not a value without a unit.
- **Precision.** A written number matches when the value, in the written unit, rounds to it at the
  precision written (the last written decimal; for integers the last non-zero digit, so "320" is ±5)
  *and* lies within 5% of it, so short numbers stay honest ("0.3" does not match 0.34).
- **Approximations.** "about/around/roughly/~/≈/nearly" allow 10% instead of rounding; "on the order
  of" allows a factor of √10.
- **Comparatives.** "over 90%" binds to a value of the same dimension (or a count, for a plain
  number) within a factor of 10 of 90% for which the comparison holds; when such values exist but
  none satisfies it, that is ``claim-comparative``. Anything looser needs an explicit ``{=name}``.
- **Ranges.** Both ends must bind ("85–90%" needs a value at 85% and one at 90%).
- **Ambiguity.** Values that match with the same number are one binding (all count as stated); two
  different numbers that both match, neither exactly, are ``claim-ambiguous`` (a warning): bind
  explicitly with ``{=name}`` so a later change of one cannot silently re-bind the prose.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..units import to_base
from .lexicon import COUNT_DIMENSIONS
from .quantity import Reading

REL_CAP = 0.05
ABOUT = 0.10
ORDER_LOG10 = 0.5
COMPARE_WINDOW = 10.0
PLAINISH = COUNT_DIMENSIONS | {"number", "factor", "fraction"}


@dataclass(frozen=True)
class Declared:
    """A verified value as the record states it (a ``given`` input or a derived ``claim``)."""

    name: str
    kind: str
    value: float
    unit: str | None
    line: int

    @property
    def base(self) -> float:
        """The value in base units."""
        return to_base(self.value, self.unit)[0]

    @property
    def dimension(self) -> str:
        """The value's dimension (``number`` when it has no unit)."""
        return to_base(self.value, self.unit)[1]

    @classmethod
    def from_record(cls, item: Mapping[str, Any]) -> Declared:
        """From one entry of a record's ``values``."""
        return cls(
            str(item["name"]),
            str(item.get("kind", "claim")),
            float(item["value"]),
            item.get("unit"),
            int(item.get("line") or 0),
        )


def compatible(qdim: str, vdim: str) -> bool:
    """Whether a written reading of dimension ``qdim`` may bind to a value of dimension ``vdim``.

    A count ("4 nodes") binds only to a value declared in the same count noun: never to another count,
    and never to a value declared without a unit (declare ``unit="nodes"``). A bare number binds to any
    count, factor, fraction or plain value; a factor or fraction reading also to a plain value.
    """
    if qdim == vdim:
        return True
    if qdim == "number":
        return vdim in PLAINISH
    return vdim == "number" and qdim in PLAINISH and qdim not in COUNT_DIMENSIONS


def comparable(qdim: str, vdim: str) -> bool:
    """Dimensions a comparative may bind across: the same, or a bare number and a count."""
    return qdim == vdim or (qdim == "number" and vdim in COUNT_DIMENSIONS)


def in_written(reading: Reading, value: Declared) -> float:
    """The value expressed in the reading's mantissa units (e.g. GiB for '320 GiB')."""
    return value.base / reading.scale


def matches(reading: Reading, value: Declared, approx: str | None = None) -> bool:
    """Whether ``value`` backs the written ``reading`` at its precision (see the module rules)."""
    if not compatible(reading.dimension, value.dimension):
        return False
    vm, w = in_written(reading, value), reading.mantissa
    if approx == "order":
        return vm > 0 and w > 0 and abs(math.log10(vm / w)) <= ORDER_LOG10
    diff = abs(vm - w)
    slack = 1e-9 * max(abs(vm), abs(w))
    if approx == "about":
        return diff <= ABOUT * abs(vm) + slack
    if w == 0:  # "0" states a value that rounds to zero at the written precision (e.g. a 2e-16 float error)
        return diff <= (0.5 if math.isinf(reading.step) else reading.step / 2)
    if vm == 0:
        return diff <= slack
    rounds = math.isinf(reading.step) or diff <= reading.step / 2 + slack
    return rounds and diff <= REL_CAP * abs(vm) + slack


def holds(reading: Reading, value: Declared, relation: str) -> bool:
    """Whether the comparison written ('>', '>=', '<', '<=') holds for the value."""
    vm, w = in_written(reading, value), reading.mantissa
    eps = 1e-9 * max(abs(vm), abs(w))
    return {
        ">": vm > w + eps,
        ">=": vm >= w - eps,
        "<": vm < w - eps,
        "<=": vm <= w + eps,
    }[relation]


def near(reading: Reading, value: Declared, window: float = COMPARE_WINDOW) -> bool:
    """Whether a compatible value lies within a factor ``window`` of the written number."""
    if not compatible(reading.dimension, value.dimension):
        return False
    vm, w = in_written(reading, value), reading.mantissa
    if vm == 0 or w == 0:
        return vm == w
    return (vm > 0) == (w > 0) and abs(math.log10(abs(vm / w))) <= math.log10(window)


def shown(reading: Reading, value: Declared) -> str:
    """The value in the written unit, one digit past the precision written (at least 4 significant)."""
    vm = in_written(reading, value) * reading.mult
    w = reading.mantissa * reading.mult
    digits = len(f"{w:.12g}".replace(".", "").replace("-", "").lstrip("0")) if w else 1
    text = f"{vm:.{max(digits + 1, 4)}g}"
    if "e" not in text and "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"{text} {reading.unit}".rstrip() if reading.unit else text


def distance(reading: Reading, value: Declared) -> float:
    vm, w = in_written(reading, value), reading.mantissa
    if vm == 0 or w == 0 or (vm > 0) != (w > 0):
        return math.inf if vm != w else 0.0
    return abs(math.log(abs(vm / w)))
