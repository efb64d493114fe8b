"""Frozen GPU results: kernel checks run on CUDA are written to ``verify/_frozen/<slug>.json`` (tracked),
with the input hash and a device stamp; a machine without a GPU accepts them only when the hash matches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..problems import Problem, error, warning
from .store import read_json

FROZEN_DIR = "verify/_frozen"


def frozen_rel(slug: str) -> str:
    """Repository-relative path of a script's frozen GPU result."""
    return f"{FROZEN_DIR}/{slug}.json"


def freeze(
    root: Path, slug: str, input_hash: str, stamp: dict[str, Any], kernels: list[dict[str, Any]], when: str
) -> str:
    """Write the CUDA kernel results of a run; returns the path written (relative)."""
    rel = frozen_rel(slug)
    data = {
        "slug": slug,
        "input_hash": input_hash,
        "ran_at": when,
        "stamp": stamp,
        "kernels": [
            {
                k: v
                for k, v in kern.items()
                if k in {"name", "ok", "line", "rtol", "atol", "max_abs_err", "dtype", "seconds"}
            }
            for kern in kernels
            if kern.get("device") == "cuda"
        ],
    }
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(_pretty(data), encoding="utf-8")  # tracked: keep it diff-friendly
    return rel


def _pretty(data: dict[str, Any]) -> str:
    import json

    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def resolve(
    root: Path, slug: str, rel: str, record: dict[str, Any], input_hash: str
) -> tuple[str | None, list[Problem], list[dict[str, Any]]]:
    """For kernel checks skipped for want of CUDA: the outcome they imply (None: no effect), problems, stamps."""
    skipped = [k for k in record.get("kernels", []) if k.get("needs_gpu")]
    if not skipped:
        return None, [], []
    frozen = read_json(root / frozen_rel(slug))
    problems: list[Problem] = []
    stamps: list[dict[str, Any]] = []
    if not isinstance(frozen, dict):
        for k in skipped:
            problems.append(
                warning(
                    rel,
                    int(k.get("line", 0)),
                    0,
                    "verify-needs-gpu",
                    f"kernel check {k['name']!r} needs a GPU and {frozen_rel(slug)} does not exist; "
                    "run `qbank verify --device cuda` on a GPU and commit the frozen file",
                )
            )
        return "needs-gpu", problems, stamps
    by_name = {k["name"]: k for k in frozen.get("kernels", [])}
    stale = frozen.get("input_hash") != input_hash
    outcome: str | None = None
    for k in skipped:
        got = by_name.get(k["name"])
        stamp = {
            "name": k["name"],
            "line": k.get("line", 0),
            "device": "cuda",
            "ran_at": frozen.get("ran_at"),
            "stamp": frozen.get("stamp"),
            "frozen": True,
            "stale": stale,
            "ok": got.get("ok") if got else None,
        }
        stamps.append(stamp)
        line = int(k.get("line", 0))
        gpu = (frozen.get("stamp") or {}).get("gpu", "a GPU")
        if stale or got is None:
            why = "stale: needs a GPU re-run" if stale else f"no frozen result for kernel {k['name']!r}"
            problems.append(
                warning(
                    rel,
                    line,
                    0,
                    "verify-frozen-stale",
                    f"{why} ({frozen_rel(slug)} was frozen on {gpu} at {frozen.get('ran_at')} for other inputs)"
                    if stale
                    else why,
                )
            )
            outcome = "needs-gpu"
        elif not got.get("ok"):
            problems.append(
                error(
                    rel,
                    line,
                    0,
                    "verify-check-failed",
                    f"kernel {k['name']!r} failed on {gpu} (frozen {frozen.get('ran_at')})",
                )
            )
            outcome = outcome or "fail"
    return outcome, problems, stamps
