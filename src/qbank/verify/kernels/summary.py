"""The summary ``qbank gpu-check`` prints: one line per kernel check of a CUDA run (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Row:
    """One kernel check of a GPU run, with its figures when it was a timed Triton kernel."""

    slug: str
    kernel: str
    path: str
    device: str
    ok: bool
    ms: float | None = None
    gb_per_s: float | None = None
    peak_fraction: float | None = None
    ref_ms: float | None = None


def rows(entries: dict[str, dict[str, Any]]) -> list[Row]:
    """Rows from the stored entries of a run (``VerifyRun.entries``), slug and record order."""
    out: list[Row] = []
    for slug in sorted(entries):
        for k in (entries[slug].get("record") or {}).get("kernels", []):
            if k.get("device") != "cuda":
                continue
            t = k.get("timing") or {}
            bw = t.get("bytes_per_s")
            out.append(
                Row(
                    slug=slug,
                    kernel=str(k.get("name")),
                    path=str(k.get("path") or "torch"),
                    device=str(k.get("device_name") or "cuda"),
                    ok=bool(k.get("ok")),
                    ms=t.get("ms"),
                    gb_per_s=bw / 1e9 if isinstance(bw, (int, float)) else None,
                    peak_fraction=t.get("peak_fraction"),
                    ref_ms=t.get("ref_ms"),
                )
            )
    return out


def _num(value: float | None, fmt: str) -> str:
    return format(value, fmt) if isinstance(value, (int, float)) else "-"


def text(table: list[Row]) -> str:
    """A fixed-width table: kernel, result, time, GB/s, % of peak, the reference's time and the ratio."""
    head = ("kernel", "path", "result", "ms", "GB/s", "% peak", "PyTorch ms", "vs PyTorch")
    lines = [
        (
            f"{r.slug}:{r.kernel}",
            r.path,
            "pass" if r.ok else "FAIL",
            _num(r.ms, ".4f"),
            _num(r.gb_per_s, ".0f"),
            _num(r.peak_fraction * 100 if r.peak_fraction is not None else None, ".1f"),
            _num(r.ref_ms, ".4f"),
            f"{r.ref_ms / r.ms:.1f}x faster" if r.ms and r.ref_ms else "-",
        )
        for r in table
    ]
    widths = [max(len(str(c)) for c in col) for col in zip(head, *lines, strict=True)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    devices = sorted({r.device for r in table})
    out = [f"GPU check on {', '.join(devices) or 'no GPU kernels'}", fmt.format(*head)]
    out += [fmt.format(*line) for line in lines]
    return "\n".join(out)
