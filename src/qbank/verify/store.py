"""The result store under ``.qbank/``: one JSON entry per script plus an index for the warm path.

Other stages (the claims checker, the site) read results through :func:`latest_record` and
:func:`latest_result`; this module imports neither torch nor mkdocs.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..atomic import write_atomic
from .warm import INDEX_REL, INDEX_VERSION, row_ok

CACHE_DIR = Path(".qbank/cache")
ENTRIES = CACHE_DIR / "entries"
INDEX = Path(INDEX_REL)
DERIVATIONS = Path(".qbank/derivations")


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (temp file + rename), so readers never see half a file."""
    write_atomic(path, json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


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
    if not isinstance(data, dict) or not isinstance(data.get("result"), dict):
        return None  # unreadable or malformed: as if the script had never run (it runs again)
    return data if isinstance(data["result"].get("outcome"), str) else None


def entry_row(entry: dict[str, Any] | None, version: int) -> dict[str, Any] | None:
    """An entry's full index row when it is of ``version`` and has the shape the engine reads, else None."""
    row = entry.get("index") if entry else None
    if not isinstance(row, dict) or row.get("v") != version or not isinstance(row.get("env"), list):
        return None
    return row if row_ok([0, row.get("stats"), row.get("result"), row.get("frozen")], 1) else None


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


@dataclass
class Index:
    """What the warm path reads of every script, compact: the index is parsed on every ``qbank verify`` and
    ``qbank check``, and at 5,000 scripts parsing a dict per row with its environment and dependency lists took
    twice as long as these four-item rows (``bench/verify.py``).

    ``rows``: slug -> ``[environment number, stats, result, frozen path or None]``; ``envs`` holds the
    environments ``[api, runtime, device, wall]`` the numbers point at; the dependencies are the stats' other files.
    An entry's own ``index`` field keeps the full row (:meth:`row` and :meth:`put` convert).
    """

    envs: list[list[Any]] = field(default_factory=list)
    rows: dict[str, list[Any]] = field(default_factory=dict)

    def env_number(self, env: list[Any]) -> int:
        """The number of an environment, -1 when no row has it."""
        try:
            return self.envs.index(env)
        except ValueError:
            return -1

    def row(self, slug: str) -> dict[str, Any] | None:
        """The full row of a script (``env``, ``deps``, ``frozen``, ``stats``, ``result``), or None."""
        compact = self.rows.get(slug)
        if compact is None:
            return None
        env, stats, result, frozen = compact
        rel = f"verify/{slug}.py"
        deps = sorted(k for k in stats if k not in (rel, frozen))
        return {"env": self.envs[env], "deps": deps, "frozen": frozen, "stats": stats, "result": result}

    def put(self, slug: str, row: dict[str, Any]) -> None:
        """Store a full row (an entry's ``index`` field) compactly."""
        env = self.env_number(row["env"])
        if env < 0:
            self.envs.append(list(row["env"]))
            env = len(self.envs) - 1
        self.rows[slug] = [env, row["stats"], row["result"], row.get("frozen")]

    def durations(self) -> dict[str, float]:
        """Slug -> the run time its result recorded (what the shard plan balances)."""
        out: dict[str, float] = {}
        for slug, (_env, _stats, result, _frozen) in self.rows.items():
            duration = result.get("duration") if isinstance(result, dict) else None
            if isinstance(duration, int | float):
                out[slug] = float(duration)
        return out


def read_index(root: Path) -> Index:
    """The index; empty when missing, unreadable or of another version (then the entries are read)."""
    data = read_json(root / INDEX)
    if not isinstance(data, dict) or data.get("version") != INDEX_VERSION:
        return Index()
    envs, rows = data.get("envs"), data.get("rows")
    if not isinstance(envs, list) or not isinstance(rows, dict):
        return Index()
    if not all(isinstance(env, list) for env in envs):
        return Index()
    return Index(envs, {slug: row for slug, row in rows.items() if isinstance(slug, str) and row_ok(row, len(envs))})


def write_index(root: Path, index: Index) -> None:
    """Replace the index (environments no row uses are dropped)."""
    used = sorted({row[0] for row in index.rows.values()})
    renumber = {old: new for new, old in enumerate(used)}
    rows = {slug: [renumber[row[0]], *row[1:]] for slug, row in index.rows.items()}
    write_json(root / INDEX, {"version": INDEX_VERSION, "envs": [index.envs[i] for i in used], "rows": rows})


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
        "duration": result.get("duration"),
        "device": result.get("device"),
        "ran_at": result.get("ran_at"),
        "kernels": result.get("kernels", []),
        "derivation": str(deriv) if deriv.exists() else None,
        "problems": result.get("problems", []),
        "input_hash": entry.get("input_hash"),
    }
