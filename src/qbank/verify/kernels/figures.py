"""A CPU build's view of the GPU: the compiled-kernel figures of a frozen, signed result.

A Triton kernel is checked through the interpreter in every CPU build; its speed exists only where a GPU
run froze it (``verify/_frozen/<slug>.json``, signed by the GPU runner's committed key). This module reads
that file for a CPU run and returns, per kernel, what the page may show: only from a file whose signature
verifies, whose input hash is this run's (the same script and library code), and only kernels that ran
compiled. A stale file adds a warning and shows nothing; a tampered one is an error.

Codes: ``verify-gpu-figures-stale`` (warning), ``verify-frozen-*`` (see ``frozen.py``), ``verify-check-failed``
(the compiled kernel failed its check on the GPU).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...problems import Problem, error, warning
from ..frozen import check_signature, frozen_rel
from ..store import read_json
from . import COMPILED


def triton_kernels(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The record's Triton kernel entries that ran on the CPU (through the interpreter)."""
    return [k for k in record.get("kernels", []) if k.get("kind") == "triton" and k.get("device") != "cuda"]


def gpu_figures(
    root: Path, slug: str, rel: str, record: dict[str, Any], input_hash: str
) -> tuple[list[Problem], dict[str, dict[str, Any]]]:
    """Problems, and kernel name -> its frozen compiled run (device name, ok, timing, ran_at, stamp)."""
    kernels = triton_kernels(record)
    if not kernels:
        return [], {}
    frozen = read_json(root / frozen_rel(slug))
    if not isinstance(frozen, dict):
        return [], {}
    bad = check_signature(root, slug, frozen)
    if bad is not None:
        return [bad], {}
    line = int(kernels[0].get("line", 0))
    if frozen.get("input_hash") != input_hash:
        gpu = (frozen.get("stamp") or {}).get("gpu", "a GPU")
        msg = (
            f"{frozen_rel(slug)} was measured on {gpu} at {frozen.get('ran_at')} for other inputs: its speed is "
            "not shown until `qbank gpu-check` runs again on a GPU"
        )
        return [warning(rel, line, 0, "verify-gpu-figures-stale", msg)], {}
    wanted = {k["name"] for k in kernels}
    out: dict[str, dict[str, Any]] = {}
    problems: list[Problem] = []
    for k in frozen.get("kernels", []):
        if not isinstance(k, dict) or k.get("name") not in wanted or k.get("path") != COMPILED:
            continue
        out[k["name"]] = {
            "device_name": k.get("device_name") or (frozen.get("stamp") or {}).get("gpu"),
            "ok": k.get("ok"),
            "timing": k.get("timing"),
            "ran_at": frozen.get("ran_at"),
            "stamp": frozen.get("stamp"),
        }
        if not k.get("ok"):
            problems.append(
                error(
                    rel,
                    int(k.get("line", 0)),
                    0,
                    "verify-check-failed",
                    f"kernel {k['name']!r} failed compiled on {out[k['name']]['device_name']} "
                    f"(frozen {frozen.get('ran_at')})",
                )
            )
    return problems, out
