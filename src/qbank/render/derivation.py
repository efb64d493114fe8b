"""The executed derivation and kernel stamps of a question, read from the verification store.

``qbank.verify.store.latest_result(root, slug)`` gives the latest run: its ``ran_at``, the path of its
``derivation`` Markdown (None when the script wrote none) and its ``kernels`` records (``name``, ``ok``,
``device``, ``device_name``, ``ran_at``, ``stamp``, ``frozen``, ``path``, ``expect_mismatch``, ``timing``
and, beside an interpreter check, the signed compiled run as ``gpu``). No result: no derivation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..memo import file_stamp
from ..verify.store import DERIVATIONS, ENTRIES, latest_result


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


def _stamp(raw: dict[str, Any], ran_at: str | None) -> KernelStamp:
    ok = raw.get("ok")
    outcome = ("pass" if ok else "fail") if isinstance(ok, bool) else str(ok or "unknown")
    if raw.get("needs_gpu"):
        outcome = "needs-gpu"
    if raw.get("expect_mismatch") and ok is True:
        outcome = "pass (broken on purpose: differs from the reference)"
    if raw.get("frozen"):
        outcome += " (frozen result)"
    # the engine stamps GPU runs with the GPU's name; CPU runs carry only the device class
    device = (raw.get("stamp") or {}).get("gpu") or raw.get("device_name") or raw.get("device")
    path = raw.get("path")
    timing = raw.get("timing")
    return KernelStamp(
        name=str(raw.get("name") or "kernel"),
        device=str(device or "unknown device"),
        ran_at=str(raw.get("ran_at") or ran_at or "unknown time"),
        outcome=outcome,
        path=str(path) if path else None,
        timing=timing if isinstance(timing, dict) and path == "triton-compiled" else None,
    )


def _stamps(raw: dict[str, Any], ran_at: str | None) -> list[KernelStamp]:
    """One row per run: an interpreter check, and beside it the signed compiled run on a GPU, if any."""
    out = [_stamp(raw, ran_at)]
    gpu = raw.get("gpu")
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


def from_result(root: Path, result: dict[str, Any]) -> Derivation:
    """One store result: derivation Markdown read from its path, kernel stamps listed."""
    markdown = None
    if result.get("derivation"):
        p = Path(result["derivation"])
        p = p if p.is_absolute() else root / p
        markdown = p.read_text(encoding="utf-8") if p.is_file() else None
    ran_at = result.get("ran_at")
    kernels = tuple(s for k in result.get("kernels") or () for s in _stamps(k, ran_at))
    return Derivation(markdown=markdown, kernels=kernels, verified_at=str(ran_at) if ran_at else None)


def latest(root: Path, slug: str) -> Derivation | None:
    """The latest verification result of a question, or None when it has none (or nothing to show).

    Kept while the stored entry and derivation keep their modification time and size: every build reads the
    derivation of each question twice (its page, the premium-text check), and `qbank serve` builds on each save.
    """
    base = str(root)
    # string paths: building two pathlib paths per question was most of this check's cost at 1,000 questions
    stamp = (file_stamp(f"{base}/{ENTRIES}/{slug}.json"), file_stamp(f"{base}/{DERIVATIONS}/{slug}.md"))
    key = (base, slug)
    kept = _LATEST.get(key)
    if kept is not None and kept[0] == stamp:
        return kept[1]
    found = _latest(root, slug)
    _LATEST[key] = (stamp, found)
    return found


_LATEST: dict[tuple[str, str], tuple[tuple[tuple[int, int, int] | None, ...], Derivation | None]] = {}


def _latest(root: Path, slug: str) -> Derivation | None:
    result = latest_result(root, slug)
    if result is None:
        return None
    derivation = from_result(root, result)
    return derivation if derivation.markdown or derivation.kernels else None
