"""The kernel-check table of a question page (pure): where each check ran, said plainly, and its speed
only where a compiled GPU run measured it.

"Triton interpreter (CPU)" and "compiled, NVIDIA H200" are different claims and never share a row: the
interpreter proves the kernel computes the right thing; only a compiled run on a named GPU says how fast.
"""

from __future__ import annotations

from typing import Any

from .derivation import KernelStamp
from .text import md_escape

HEADER = ("| check | ran on | result | ran at |", "| --- | --- | --- | --- |")
TIMED_HEADER = ("| check | ran on | result | speed (compiled runs only) | ran at |", "| --- | --- | --- | --- | --- |")


def where(k: KernelStamp) -> str:
    """The 'ran on' cell: the Triton path with its device, or the device of a PyTorch kernel check."""
    if k.path == "triton-interpreter":
        return "Triton interpreter (CPU)"
    if k.path == "triton-compiled":
        return f"compiled, {k.device}"
    return k.device


def _si(value: float, unit: str) -> str:
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def speed(timing: dict[str, Any] | None) -> str:
    """'0.0412 ms · 3.1 TB/s, 65% of the 4.8 TB/s datasheet peak · PyTorch 0.33 ms (8.0× slower)'; '' without."""
    if not timing or not isinstance(timing.get("ms"), (int, float)):
        return ""
    parts = [f"{timing['ms']:.3g} ms"]
    bw, frac, peak = timing.get("bytes_per_s"), timing.get("peak_fraction"), timing.get("peak_bytes_per_s")
    if isinstance(bw, (int, float)):
        text = _si(bw, "B/s")
        if isinstance(frac, (int, float)) and isinstance(peak, (int, float)):
            text += f", {frac * 100:.2g}% of the {_si(peak, 'B/s')} datasheet peak"
        parts.append(text)
    if isinstance(timing.get("flop_per_s"), (int, float)):
        parts.append(_si(timing["flop_per_s"], "FLOP/s"))
    ref = timing.get("ref_ms")
    if isinstance(ref, (int, float)) and ref > 0:
        parts.append(f"PyTorch reference {ref:.3g} ms ({ref / timing['ms']:.1f}× the kernel's time)")
    return " · ".join(parts)


def kernel_table(kernels: tuple[KernelStamp, ...] | list[KernelStamp]) -> list[str]:
    """The Markdown lines of the table (cells escaped); the speed column only when a compiled run has one."""
    speeds = [speed(k.timing) if k.path == "triton-compiled" else "" for k in kernels]
    if not any(speeds):
        rows = [f"| {md_escape(k.name)} | {md_escape(where(k))} | {md_escape(k.outcome)} | {md_escape(k.ran_at)} |"
                for k in kernels]  # fmt: skip
        return [*HEADER, *rows]
    rows = [
        f"| {md_escape(k.name)} | {md_escape(where(k))} | {md_escape(k.outcome)} | {md_escape(s)} | "
        f"{md_escape(k.ran_at)} |"
        for k, s in zip(kernels, speeds, strict=True)
    ]
    return [*TIMED_HEADER, *rows]
