"""Quantities as data: a written number's readings (value, precision, unit) and where it was found."""

from __future__ import annotations

from dataclasses import dataclass

from ..units import UNITS
from .lexicon import UNIT_WORDS


@dataclass(frozen=True)
class Reading:
    """One interpretation of a written number: ``mantissa`` as written, at ``step`` precision, × ``scale``."""

    mantissa: float
    step: float
    """Written precision in mantissa units (``inf``: only the relative cap applies, e.g. 'a third')."""
    scale: float
    """Mantissa to base units (suffix × unit scale)."""
    dimension: str
    unit: str
    """The unit symbol as qbank.units spells it, '' for a plain number."""
    mult: float = 1.0
    """The magnitude suffix alone (1e3 for 'K'), for display."""

    @property
    def base(self) -> float:
        """The value in base units."""
        return self.mantissa * self.scale

    def shown(self) -> str:
        """The reading as 'value unit', e.g. '2000 tokens'."""
        value = f"{self.mantissa * self.mult:.12g}"
        return f"{value} {self.unit}" if self.unit else value


@dataclass(frozen=True)
class Found:
    """One quantity in a text: its span, where its number starts, its readings and modifiers."""

    start: int
    end: int
    num_start: int
    rule: str
    lo: tuple[Reading, ...]
    hi: tuple[Reading, ...] | None = None
    relation: str | None = None
    approx: str | None = None
    noun: str | None = None
    num_end: int = -1
    """End of the first number as written (before its unit): what a mutation rewrites."""
    hi_span: tuple[int, int] | None = None
    """Start and end of a range's second number as written."""

    def canonical(self) -> str:
        """A compact form for tests: '[~|>|>=|<|<=|order ]VALUE[..VALUE] [UNIT]'."""
        pre = {"about": "~", "order": "order "}.get(self.approx or "", "") + (self.relation or "")
        lo = self.lo[0]
        if self.hi:
            hi = self.hi[0]
            body = f"{lo.mantissa * lo.mult:.12g}..{hi.mantissa * hi.mult:.12g}"
            return f"{pre}{body} {hi.unit}".rstrip()
        return f"{pre}{lo.shown()}"


def step_of(int_part: str, frac: str | None) -> float:
    """Written precision: the last decimal place, or for integers the last non-zero digit (320 -> 10)."""
    if frac:
        return 10.0 ** -len(frac)
    digits = int_part.replace(",", "")
    stripped = digits.rstrip("0")
    return 10.0 ** (len(digits) - len(stripped)) if stripped else 1.0


def unit_info(symbol: str) -> tuple[str, float, str]:
    """(qbank symbol, scale to base, dimension) for a prose unit spelling."""
    target, mult = UNIT_WORDS.get(symbol, (symbol, 1.0))
    unit = UNITS[target]
    return target, unit.scale * mult, unit.dimension


def readings(mantissa: float, step: float, mults: tuple[float, ...], unit: str | None) -> tuple[Reading, ...]:
    """All readings of a number: one per suffix interpretation, in the unit given (or plain)."""
    out = []
    for mult in mults:
        if unit is None:
            out.append(Reading(mantissa, step, mult, "number", "", mult))
        else:
            target, scale, dim = unit_info(unit)
            label = target if UNIT_WORDS.get(unit, (target, 1.0))[1] == 1.0 else unit  # "kW" stays "kW"
            out.append(Reading(mantissa, step, mult * scale, dim, label, mult))
    return tuple(out)
