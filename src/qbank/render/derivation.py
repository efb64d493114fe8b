"""Adapter to the verification store: the executed derivation and kernel stamps of a question, if any.

The verification engine provides ``qbank.verify.store.latest_result(root, slug)``. This adapter reads
its result by duck typing (attributes or mapping keys) and returns None when the store is absent,
has no result, or the derivation file is missing, so the site builds before and without it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class KernelStamp:
    """Where and when one kernel check ran, and how it came out."""

    name: str
    device: str
    ran_at: str
    outcome: str
    path: str | None = None
    """``triton-interpreter`` or ``triton-compiled`` for a Triton kernel; None for a PyTorch ``kernel_check``."""
    timing: dict[str, Any] | None = None
    """Measured figures of a compiled run on a GPU (ms, bytes_per_s, peak_fraction, ref_ms ...)."""


@dataclass(frozen=True)
class Derivation:
    """What a question page shows from verification."""

    markdown: str | None
    kernels: tuple[KernelStamp, ...]
    verified_at: str | None = None


def _get(obj: Any, *names: str) -> Any:
    for name in names:
        value = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
        if value is not None:
            return value
    return None


def _stamp(raw: Any, result: Any) -> KernelStamp:
    ok = _get(raw, "outcome", "status", "ok")
    outcome = ("pass" if ok else "fail") if isinstance(ok, bool) else str(ok or "unknown")
    if _get(raw, "expect_mismatch") and ok is True:
        outcome = "pass (broken on purpose: differs from the reference)"
    if _get(raw, "frozen"):
        outcome += " (frozen result)"
    # the engine stamps GPU runs with the GPU's name; CPU runs carry only the device class
    stamp = _get(raw, "stamp") or {}
    device = _get(stamp, "gpu", "gpu_name") or _get(raw, "device_name", "device", "where")
    path = _get(raw, "path")
    timing = _get(raw, "timing")
    return KernelStamp(
        name=str(_get(raw, "name") or "kernel"),
        device=str(device or "unknown device"),
        ran_at=str(_get(raw, "ran_at", "when", "at", "timestamp") or _get(result, "ran_at") or "unknown time"),
        outcome=outcome,
        path=str(path) if path else None,
        timing=timing if isinstance(timing, dict) and path == "triton-compiled" else None,
    )


def _stamps(raw: Any, result: Any) -> list[KernelStamp]:
    """One row per run: an interpreter check, and beside it the signed compiled run on a GPU, if any."""
    out = [_stamp(raw, result)]
    gpu = _get(raw, "gpu")
    if isinstance(gpu, dict):
        ok = gpu.get("ok")
        out.append(
            KernelStamp(
                name=out[0].name,
                device=str(gpu.get("device_name") or "a GPU"),
                ran_at=str(gpu.get("ran_at") or "unknown time"),
                outcome=("pass" if ok else "fail") + " (frozen result, signed)",
                path="triton-compiled",
                timing=gpu.get("timing") if isinstance(gpu.get("timing"), dict) else None,
            )
        )
    return out


def from_result(root: Path, result: Any) -> Derivation:
    """Normalise one store result: derivation Markdown read from its path, kernel stamps listed."""
    markdown = _get(result, "derivation_markdown")
    path = _get(result, "derivation_md", "derivation_path", "derivation", "markdown_path")
    if markdown is None and path is not None:
        p = Path(path)
        p = p if p.is_absolute() else root / p
        markdown = p.read_text(encoding="utf-8") if p.is_file() else None
    raws = _get(result, "kernels", "kernel_stamps", "kernel_checks") or ()
    kernels = tuple(s for k in raws for s in _stamps(k, result))
    at = _get(result, "finished_at", "ran_at", "verified_at", "when")
    return Derivation(markdown=str(markdown) if markdown is not None else None, kernels=kernels,
                      verified_at=str(at) if at is not None else None)


def latest(root: Path, slug: str) -> Derivation | None:
    """The latest verification result of a question, or None when the store module or a result is missing."""
    try:
        store = importlib.import_module("qbank.verify.store")
    except ImportError:
        return None
    fn = getattr(store, "latest_result", None)
    if fn is None:
        return None
    result = fn(root, slug)
    if result is None:
        return None
    derivation = from_result(root, result)
    return derivation if derivation.markdown or derivation.kernels else None
