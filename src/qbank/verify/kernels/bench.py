"""Timing figures of a compiled kernel: its time and its reference's, achieved bandwidth and FLOP/s, and the
fraction of the device's datasheet peak. The arithmetic is pure (:func:`figures`); :func:`measure` adds the
timer, ``triton.testing.do_bench`` on CUDA (median of repeated launches, L2 flushed between them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .peak import Peak

Timer = Callable[[Callable[[], Any]], float]
"""Milliseconds per call of a zero-argument function."""


def figures(
    ms: float, ref_ms: float | None, bytes_moved: int | None, flops: int | None, peak: Peak | None
) -> dict[str, Any]:
    """The recorded figures from measured times (ms) and the shape-derived byte and FLOP counts."""
    out: dict[str, Any] = {"ms": ms, "ref_ms": ref_ms, "speedup_vs_ref": (ref_ms / ms) if ref_ms and ms > 0 else None}
    seconds = ms * 1e-3
    out["bytes_moved"] = bytes_moved
    out["flops"] = flops
    out["bytes_per_s"] = bytes_moved / seconds if bytes_moved and seconds > 0 else None
    out["flop_per_s"] = flops / seconds if flops and seconds > 0 else None
    out["peak_fact"] = peak.fact if peak else None
    out["peak_bytes_per_s"] = peak.bytes_per_s if peak else None
    out["peak_fraction"] = (
        out["bytes_per_s"] / peak.bytes_per_s if peak is not None and out["bytes_per_s"] is not None else None
    )
    return out


def do_bench_timer(fn: Callable[[], Any]) -> float:
    """``triton.testing.do_bench`` (ms, median) of ``fn`` on the current CUDA device."""
    from triton.testing import do_bench

    return float(do_bench(fn, warmup=25, rep=100, return_mode="median"))


def measure(
    launch: Callable[[], Any],
    reference: Callable[[], Any],
    bytes_moved: int | None,
    flops: int | None,
    peak: Peak | None,
    timer: Timer = do_bench_timer,
) -> dict[str, Any]:
    """Time the launch and the reference with ``timer``; a reference that cannot run on the device (a
    Python loop calling ``.item()`` is merely slow; one that needs the CPU raises) is reported as such."""
    ms = timer(launch)
    try:
        ref_ms: float | None = timer(reference)
        ref_error = None
    except Exception as exc:  # the reference is the script's code: its failure here is a note, not a crash
        ref_ms, ref_error = None, f"{type(exc).__name__}: {exc}"[:200]
    out = figures(ms, ref_ms, bytes_moved, flops, peak)
    out["ref_error"] = ref_error
    return out
