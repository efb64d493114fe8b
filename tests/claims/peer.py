"""Score the claims extractor on quantulum3's English test cases (read from the installed package, MIT).

quantulum3 labels each sentence with the quantities in it (value as written, unit name). A labelled
quantity is *recalled* when the extractor found a quantity with that value (a range's either end), and
recalled *with its dimension* when the reading's dimension is the one the unit measures. Precision is the
share of the extractor's quantities that match a labelled one. The in-domain subset keeps the sentences
whose every label is in this site's units: sizes, bandwidths, times, percentages, ratios, counts, frequencies.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from importlib import resources
from typing import Any

from qbank.claims.extract import extract
from qbank.claims.lexicon import COUNT_DIMENSIONS
from qbank.claims.quantity import Reading

CASE_FILES = ("quantities.json", "quantities.ambiguity.json")
# quantulum3 unit name -> the dimension qbank reads it in
DOMAIN: dict[str, str] = {
    "dimensionless": "number",
    "dozen": "number",
    "gross": "number",
    "baker's dozen": "number",
    "percentage": "fraction",
    "bit": "bytes",
    "byte": "bytes",
    "kibibyte": "bytes",
    "kilobyte": "bytes",
    "megabyte": "bytes",
    "gigabyte": "bytes",
    "terabyte": "bytes",
    "exabyte": "bytes",
    "megabit per second": "bytes/s",
    "gigabit per second": "bytes/s",
    "second": "time",
    "millisecond": "time",
    "microsecond": "time",
    "nanosecond": "time",
    "minute": "time",
    "hour": "time",
    "day": "time",
    "week": "time",
    "month": "time",
    "year": "time",
    "hertz": "frequency",
    "kilohertz": "frequency",
    "megahertz": "frequency",
    "gigahertz": "frequency",
    "inverse second": "frequency",
}


# quantulum3 labels "a dozen" as 1 dozen and "32K" as 32 kibibytes; qbank reads 12 and 32000 or 32768
COUNT_SCALE: dict[str, float] = {"dozen": 12.0, "gross": 144.0, "baker's dozen": 13.0, "kibibyte": 1024.0}


@dataclass
class Score:
    """Counts behind recall and precision."""

    labels: int = 0
    value_hits: int = 0
    dim_hits: int = 0
    found: int = 0
    found_hits: int = 0

    def add(self, other: Score) -> None:
        for k in ("labels", "value_hits", "dim_hits", "found", "found_hits"):
            setattr(self, k, getattr(self, k) + getattr(other, k))

    def figures(self) -> dict[str, float]:
        def ratio(a: int, b: int) -> float:
            return a / b if b else 1.0

        return {
            "value_recall": ratio(self.value_hits, self.labels),
            "value_dimension_recall": ratio(self.dim_hits, self.labels),
            "precision": ratio(self.found_hits, self.found),
        }


def cases() -> list[dict[str, Any]]:
    """quantulum3's English quantity test cases, as the installed package ships them."""
    folder = resources.files("quantulum3") / "_lang" / "en_US" / "tests"
    out: list[dict[str, Any]] = []
    for name in CASE_FILES:
        out += json.loads((folder / name).read_text(encoding="utf-8"))
    return out


def in_domain(case: dict[str, Any]) -> bool:
    """Whether every labelled quantity of a sentence is in this site's units."""
    return bool(case["res"]) and all(r["unit"] in DOMAIN for r in case["res"])


def _values(reading: Reading) -> float:
    return reading.mantissa * reading.mult


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)


def _dimension_ok(reading: Reading, want: str | None) -> bool:
    if want is None:
        return False
    if want == "number":
        return reading.dimension in {"number", "factor"} | COUNT_DIMENSIONS
    return reading.dimension == want


def score_case(case: dict[str, Any]) -> Score:
    """Match one sentence's labels against what the extractor found there."""
    found = [q.found for q in extract(case["req"])[0] if q.found.rule != "unread"]
    ends = [[*f.lo, *(f.hi or ())] for f in found]
    means = [(_values(f.lo[0]) + _values(f.hi[0])) / 2 if f.hi else None for f in found]
    used: set[int] = set()
    s = Score(labels=len(case["res"]), found=len(found))
    for label in case["res"]:
        want = DOMAIN.get(label["unit"])
        value = float(label["value"])
        scaled = value * COUNT_SCALE.get(label["unit"], 1.0)

        def same(r: Reading, k: int, value: float = value, scaled: float = scaled) -> bool:
            mean = means[k]
            return _same(_values(r), value) or _same(_values(r), scaled) or (mean is not None and _same(mean, value))

        hit = None
        for k, readings in enumerate(ends):
            if (
                k not in used
                and any(same(r, k) for r in readings)
                and (hit is None or any(_dimension_ok(r, want) for r in readings))
            ):
                hit = k
                if any(_dimension_ok(r, want) for r in readings):
                    break
        if hit is None:
            continue
        used.add(hit)
        s.value_hits += 1
        s.dim_hits += any(same(r, hit) and _dimension_ok(r, want) for r in ends[hit])
    s.found_hits = len(used)
    return s


def score(all_cases: list[dict[str, Any]]) -> tuple[Score, Score]:
    """(all cases, in-domain cases)."""
    total, domain = Score(), Score()
    for case in all_cases:
        s = score_case(case)
        total.add(s)
        if in_domain(case):
            domain.add(s)
    return total, domain
