"""The script API that verification scripts import: inputs with sources, derived claims, checks.

A script records what it declares; when it ends, the record is written as JSON to the file named by
``QBANK_VERIFY_OUT`` (set by the runner). Scripts never print results themselves.
"""

from __future__ import annotations

import atexit
import inspect
import json
import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..units import lookup

API_VERSION = 1
OUT_ENV = "QBANK_VERIFY_OUT"


class VerifyUsageError(ValueError):
    """A script used the API wrongly (bad unit, missing source, duplicate name)."""


@dataclass(frozen=True)
class Value:
    """A declared input (``given``) or derived value (``claim``), in the unit the script chose."""

    name: str
    kind: str
    value: float
    unit: str | None
    line: int
    source: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class Check:
    """A boolean check with the message that explains it."""

    message: str
    ok: bool
    line: int


@dataclass
class Record:
    """Everything one script declared, in order."""

    api: int = API_VERSION
    values: list[Value] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    extra: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The JSON form the runner reads back."""
        return {
            "api": self.api,
            "values": [asdict(v) for v in self.values],
            "checks": [asdict(c) for c in self.checks],
            **self.extra,
        }


RECORD = Record()


def _caller_line() -> int:
    """Line of the first frame outside this package: the script's own line."""
    frame = inspect.currentframe()
    here = Path(__file__).resolve().parent
    while frame is not None:
        if Path(frame.f_code.co_filename).resolve().parent != here:
            return frame.f_lineno
        frame = frame.f_back
    return 0


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            value = float(value)  # numpy and torch scalars
        except (TypeError, ValueError) as exc:
            raise VerifyUsageError(f"{name}: value must be a number, got {type(value).__name__}") from exc
    if not math.isfinite(value):
        raise VerifyUsageError(f"{name}: value must be finite, got {value}")
    return float(value)


def _declare(name: str, kind: str, value: Any, unit: str | None, source: str | None, note: str | None) -> float:
    if not name.isidentifier():
        raise VerifyUsageError(f"{name!r}: names must be identifiers (letters, digits, underscores)")
    if unit is not None and lookup(unit) is None:
        raise VerifyUsageError(f"{name}: unknown unit {unit!r}; see qbank.units.UNITS")
    if any(v.name == name for v in RECORD.values):
        raise VerifyUsageError(f"{name}: declared twice")
    number = _number(name, value)
    RECORD.values.append(Value(name, kind, number, unit, _caller_line(), source, note))
    return number


def given(name: str, value: Any, *, source: str, unit: str | None = None, note: str | None = None) -> float:
    """Declare an input number with where it comes from; returns it for use in the script."""
    if not source or not source.strip():
        raise VerifyUsageError(f"{name}: every input needs a source")
    return _declare(name, "given", value, unit, source, note)


def claim(name: str, value: Any, *, unit: str | None = None, note: str | None = None) -> float:
    """Declare a derived number that the answer may state; returns it."""
    return _declare(name, "claim", value, unit, None, note)


def check(condition: Any, message: str) -> bool:
    """Record a boolean check; a false one fails the script's verification."""
    ok = bool(condition)
    RECORD.checks.append(Check(message, ok, _caller_line()))
    return ok


def _write() -> None:
    out = os.environ.get(OUT_ENV)
    if out:
        Path(out).write_text(json.dumps(RECORD.to_json()), encoding="utf-8")


atexit.register(_write)
