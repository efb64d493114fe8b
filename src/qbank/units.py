"""Units shared by verification scripts and the claims checker: each unit is a dimension and a scale.

A value declared in a script as ``claim("kv", 327680 * 2**20, unit="B")`` and a prose quantity
"320 GiB" meet in base units (bytes here). Decimal prefixes are powers of ten (GB = 10^9 B),
binary ones powers of two (GiB = 2^30 B), as vendors and the facts file use them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Unit:
    """A unit: its dimension (what it measures) and how many base units one of it is."""

    symbol: str
    dimension: str
    scale: float


COUNT_UNITS = (
    "tokens",
    "layers",
    "heads",
    "GPUs",
    "experts",
    "params",
    "requests",
    "blocks",
    "nodes",
    "steps",
    "elements",
    "dims",
    "words",
    "bits-per-token",
    # what a deployment counts: a count binds only to a value declared in the same count
    "instances",
    "replicas",
    "ranks",
    "sequences",
    "servers",
    "users",
    "pages",
    "chunks",
    "slots",
    "stages",
    "shards",
    "rounds",
    "iterations",
    "kernels",
    "warps",
    "threads",
    "SMs",
    "calls",
    "racks",
)
"""Count units: the noun a count is declared in (``claim("h100_nodes", 4, unit="nodes")``)."""


def _table() -> dict[str, Unit]:
    units: dict[str, Unit] = {}

    def add(symbol: str, dimension: str, scale: float, *aliases: str) -> None:
        unit = Unit(symbol, dimension, scale)
        for name in (symbol, *aliases):
            units[name] = unit

    dec = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
    binary = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50}
    for p, f in dec.items():
        add(f"{p}B", "bytes", f, *([f"{p.lower()}B"] if p == "K" else []))
        add(f"{p}bit", "bytes", f / 8, f"{p}b")
        add(f"{p}B/s", "bytes/s", f)
        add(f"{p}bit/s", "bytes/s", f / 8, f"{p}b/s", f"{p}bps")
        add(f"{p}FLOP", "flop", f, f"{p}FLOPs")
        add(f"{p}FLOP/s", "flop/s", f, f"{p}FLOPS")
    for p, f in binary.items():
        add(f"{p}B", "bytes", f)
        add(f"{p}B/s", "bytes/s", f)
    add("s", "time", 1.0, "sec")
    add("ms", "time", 1e-3)
    add("us", "time", 1e-6, "µs", "μs")
    add("ns", "time", 1e-9)
    add("min", "time", 60.0)
    add("h", "time", 3600.0)
    add("day", "time", 86400.0, "days")
    add("week", "time", 7 * 86400.0, "weeks")
    add("year", "time", 365 * 86400.0, "years")  # a calendar year of 365 days, as warranty and TBW ratings count
    add("month", "time", 365 * 86400.0 / 12, "months")
    for p, f in dec.items():
        add(f"{p.lower() if p == 'K' else p}Hz", "frequency", f)
    add("%", "fraction", 0.01, "percent")
    add("fraction", "fraction", 1.0)
    add("x", "factor", 1.0, "×")
    for count in COUNT_UNITS:
        add(count, count, 1.0)
    add("tokens/s", "tokens/s", 1.0)
    add("W", "power", 1.0)
    return units


UNITS: dict[str, Unit] = _table()


def lookup(symbol: str | None) -> Unit | None:
    """The unit for a symbol, or None for a plain number (or an unknown symbol)."""
    if symbol is None:
        return None
    return UNITS.get(symbol)


def to_base(value: float, symbol: str | None) -> tuple[float, str]:
    """Convert a value to its dimension's base unit; plain numbers have dimension ``number``."""
    unit = lookup(symbol)
    if unit is None:
        return value, "number"
    return value * unit.scale, unit.dimension
