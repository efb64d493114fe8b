"""The result store under ``.qbank/``: one JSON entry per script plus an index for the warm path.

Other stages (the claims checker, the site) read results through :func:`latest_record` and
:func:`latest_result`; this module imports neither torch nor mkdocs.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

CACHE_DIR = Path(".qbank/cache")
ENTRIES = CACHE_DIR / "entries"
INDEX = CACHE_DIR / "index.json"
DERIVATIONS = Path(".qbank/derivations")
INDEX_VERSION = 2


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (temp file + rename), so readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # a name unique to this process and thread (worker threads write entries concurrently)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, ensure_ascii=False, separators=(",", ":"))
    os.replace(tmp, path)


def read_json(path: Path) -> Any:
    """Parsed JSON, or None when the file is missing or unreadable."""
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def entry_path(root: Path, slug: str) -> Path:
    """Where a script's latest entry lives."""
    return root / ENTRIES / f"{slug}.json"


def derivation_path(root: Path, slug: str) -> Path:
    """Where a script's exported derivation (Markdown) lives."""
    return root / DERIVATIONS / f"{slug}.md"


def read_entry(root: Path, slug: str) -> dict[str, Any] | None:
    """The stored entry of a script's latest run (inputs, result, record, derivation), if any."""
    data = read_json(entry_path(root, slug))
    return data if isinstance(data, dict) else None


def write_entry(root: Path, entry: dict[str, Any]) -> None:
    """Store an entry and its derivation Markdown."""
    slug = entry["slug"]
    write_json(entry_path(root, slug), entry)
    md = entry.get("derivation")
    if isinstance(md, str):
        path = derivation_path(root, slug)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(md, encoding="utf-8")


def remove_entry(root: Path, slug: str) -> None:
    """Forget a script's stored results (its script is gone)."""
    for path in (entry_path(root, slug), derivation_path(root, slug)):
        path.unlink(missing_ok=True)


def read_index(root: Path) -> dict[str, Any]:
    """The index: slug -> what the warm path needs (key, input stats); empty when missing."""
    data = read_json(root / INDEX)
    if not isinstance(data, dict) or data.get("version") != INDEX_VERSION:
        return {}
    entries = data.get("entries")
    return entries if isinstance(entries, dict) else {}


def write_index(root: Path, entries: dict[str, Any]) -> None:
    """Replace the index."""
    write_json(root / INDEX, {"version": INDEX_VERSION, "entries": entries})


def latest_record(root: Path, slug: str) -> dict[str, Any] | None:
    """The record JSON of the script's latest run, whatever its outcome, with ``outcome`` added."""
    entry = read_entry(root, slug)
    if entry is None:
        return None
    record = dict(entry.get("record") or {"api": None, "values": [], "checks": []})
    record["outcome"] = entry["result"]["outcome"]
    return record


def latest_result(root: Path, slug: str) -> dict[str, Any] | None:
    """Outcome, duration, device, kernel stamps and derivation path of the script's latest run."""
    entry = read_entry(root, slug)
    if entry is None:
        return None
    result = entry["result"]
    deriv = derivation_path(root, slug)
    return {
        "slug": slug,
        "outcome": result["outcome"],
        "duration": result["duration"],
        "device": result["device"],
        "ran_at": result.get("ran_at"),
        "kernels": result.get("kernels", []),
        "derivation": str(deriv) if deriv.exists() else None,
        "problems": result.get("problems", []),
        "input_hash": entry.get("input_hash"),
    }
