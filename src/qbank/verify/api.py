"""The script API that verification scripts import: inputs with sources, derived claims, checks.

A script records what it declares; when it ends, the record is written as JSON to the file named by
``QBANK_VERIFY_OUT`` (set by the runner). Scripts never print results themselves.

Every declaration gets a sequence number and extends a SHA-256 chain (:func:`chain_link`) whose head the
record carries; the runner recomputes it (``outcomes.record_problems``), so editing the record's lists
after the fact breaks the chain unless the editor also recomputes it, which the static check
(``lint.py``) makes visible: the record and every private name here are off limits to scripts.
"""

from __future__ import annotations

import atexit
import hashlib
import inspect
import json
import math
import os
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..units import lookup
from .version import API_VERSION

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
    seq: int = -1


@dataclass(frozen=True)
class Check:
    """A boolean check with the message that explains it."""

    message: str
    ok: bool
    line: int
    seq: int = -1


@dataclass
class Record:
    """Everything one script declared, in order."""

    api: int = API_VERSION
    values: list[Value] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    extra: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    chain: str = ""
    count: int = 0

    def to_json(self) -> dict[str, Any]:
        """The JSON form the runner reads back."""
        return {
            "api": self.api,
            "values": [asdict(v) for v in self.values],
            "checks": [asdict(c) for c in self.checks],
            **self.extra,
            "chain": self.chain,
            "count": self.count,
        }


CHAIN_KINDS = ("values", "checks", "kernels", "timings")
"""The record lists whose entries are chained (each entry carries its ``seq``)."""


def chain_link(head: str, kind: str, entry: dict[str, Any]) -> str:
    """The next chain head after ``entry`` (its JSON form, ``seq`` included) of list ``kind``."""
    body = json.dumps(entry, sort_keys=True, separators=(",", ":"))  # NaN/inf (a kernel's error) round-trip
    return hashlib.sha256(f"{head}\n{kind}\n{body}".encode()).hexdigest()


def _seal(kind: str, entry: dict[str, Any]) -> None:
    RECORD.chain = chain_link(RECORD.chain, kind, entry)
    RECORD.count += 1


def _next_seq() -> int:
    return RECORD.count


def _add_value(value: Value) -> None:
    RECORD.values.append(value)
    _seal("values", asdict(value))


def _add_check(chk: Check) -> None:
    RECORD.checks.append(chk)
    _seal("checks", asdict(chk))


def _add_extra(kind: str, entry: dict[str, Any]) -> None:
    entry = {**entry, "seq": _next_seq()}
    RECORD.extra.setdefault(kind, []).append(entry)
    _seal(kind, entry)


def _add_kernel(entry: dict[str, Any]) -> None:
    _add_extra("kernels", entry)


RECORD = Record()


def _caller_line() -> int:
    """The script's own line: the innermost frame of the script being run (``__main__``), else the first
    frame outside this package (a call made through a ``verify/_lib`` helper reports the script's line)."""
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    here = Path(__file__).resolve().parent
    outside = 0
    frame = inspect.currentframe()
    while frame is not None:
        name = frame.f_code.co_filename
        if main and name == main:
            return frame.f_lineno
        if not outside and Path(name).resolve().parent != here:
            outside = frame.f_lineno
        frame = frame.f_back
    return outside


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
    _add_value(Value(name, kind, number, unit, _caller_line(), source, note, _next_seq()))
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
    _add_check(Check(message, ok, _caller_line(), _next_seq()))
    return ok


def fact(key: str, name: str | None = None, *, unit: str | None = None) -> float:
    """Declare a sourced input from ``verify/_lib/facts.yaml`` (``group.key``) as a ``given``.

    ``name`` defaults to the fact's key; ``unit`` overrides the unit mapped from the facts file.
    """
    from .facts import facts_path, lookup_fact

    value, fact_unit, source = lookup_fact(key)
    inputs = RECORD.extra.setdefault("inputs", [])
    path = str(facts_path())
    if {"path": path} not in inputs:
        inputs.append({"path": path})
    return given(name or key.split(".")[-1], value, source=f"facts:{key} — {source}", unit=unit or fact_unit)


def device() -> str:
    """The device kernel checks run on: ``$QBANK_DEVICE`` (cpu or cuda), else cuda when available."""
    want = os.environ.get("QBANK_DEVICE", "auto")
    if want in {"cpu", "cuda"}:
        return want
    try:
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    except ImportError:
        return "cpu"


def kernel_check(
    name: str,
    kernel: Any,
    reference: Any,
    *args: Any,
    rtol: float | None = None,
    atol: float | None = None,
    requires_cuda: bool = False,
) -> bool:
    """Run ``kernel(*args)`` on the selected device and compare with ``reference(*args)`` on the CPU.

    Tensors in ``args`` are moved to the device for the kernel; tolerances default by dtype
    (float32 1e-5/1e-6, float16 1e-3, bfloat16 1.6e-2, integers and bools exact).
    """
    import time

    import torch

    dev = device()
    line = _caller_line()
    if requires_cuda and dev != "cuda":
        _add_kernel({"name": name, "device": dev, "ok": None, "needs_gpu": True, "line": line})
        return False

    def move(x: Any, d: str) -> Any:
        return x.to(d) if isinstance(x, torch.Tensor) else x

    # QBANK_FAKE_CUDA (a test hook of the runner) stands a CPU in for the GPU, so the CUDA path is testable
    run_on = "cpu" if dev == "cuda" and os.environ.get("QBANK_FAKE_CUDA") else dev
    expected = reference(*[move(a, "cpu") for a in args])
    start = time.perf_counter()
    got = kernel(*[move(a, run_on) for a in args])
    if run_on == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    # plain tensors: a subclass's __torch_function__ could otherwise answer allclose itself
    with torch._C.DisableTorchFunctionSubclass():
        exp_t = torch.as_tensor(expected).detach().to("cpu").as_subclass(torch.Tensor)
        got_t = torch.as_tensor(got).detach().to("cpu").as_subclass(torch.Tensor)
    _compare(name, dev, line, seconds, exp_t, got_t, rtol, atol)
    return bool(RECORD.checks[-1].ok)


def _compare(
    name: str, dev: str, line: int, seconds: float, exp_t: Any, got_t: Any, rtol: float | None, atol: float | None
) -> None:
    import torch

    defaults = {
        torch.float32: (1e-5, 1e-6),
        torch.float64: (1e-7, 1e-9),
        torch.float16: (1e-3, 1e-5),
        torch.bfloat16: (1.6e-2, 1e-5),
    }
    r, a = defaults.get(exp_t.dtype, (0.0, 0.0))
    rt, at = (rtol if rtol is not None else r), (atol if atol is not None else a)
    ok = exp_t.shape == got_t.shape and bool(torch.allclose(got_t.to(exp_t.dtype), exp_t, rtol=rt, atol=at))
    max_err = (
        float((got_t.double() - exp_t.double()).abs().max()) if exp_t.shape == got_t.shape and exp_t.numel() else 0.0
    )
    _add_kernel(
        {
            "name": name,
            "device": dev,
            "ok": ok,
            "needs_gpu": False,
            "line": line,
            "rtol": rt,
            "atol": at,
            "max_abs_err": max_err,
            "seconds": seconds,
            "dtype": str(exp_t.dtype),
        }
    )
    _add_check(Check(f"kernel {name} matches its CPU reference (rtol={rt}, atol={at})", ok, line, _next_seq()))


def timing(name: str, seconds: float) -> float:
    """Record a timing with the device it ran on; timings are reported, never asserted."""
    _add_extra("timings", {"name": name, "seconds": float(seconds), "device": device(), "line": _caller_line()})
    return float(seconds)


def _write() -> None:
    out = os.environ.get(OUT_ENV)
    if out:
        Path(out).write_text(json.dumps(RECORD.to_json()), encoding="utf-8")


atexit.register(_write)
