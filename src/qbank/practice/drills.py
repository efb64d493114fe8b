"""Check drills in the sandbox: the reference passes every test, the known-wrong solution fails an edge case.

Results are cached under ``.qbank/practice/`` by the hash of the drill's files and the runner's code,
so an unchanged drill costs a stat and a hash; a verdict reached with ``--trust-local`` (no bubblewrap wall)
never serves a sandboxed check, which runs the drill again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..problems import Problem, error
from ..verify.store import read_json, write_json
from ..verify.warm import wall, wall_serves
from . import harness
from .load import Bank, drill_path
from .model import DRILL_FILES

CACHE = Path(".qbank/practice/drills")
TIMEOUT = 60.0
ENTRY = Path(__file__).with_name("drill_entry.py")
"""The script the sandbox runs (a file, never imported here)."""


def drill_hash(bank: Bank, slug: str) -> str:
    """What a drill's verdict depends on: its files and the runner's own code."""
    h = hashlib.sha256()
    for name in DRILL_FILES:
        h.update(name.encode() + b"\0" + bank.drill_sources[slug][name].encode() + b"\0")
    for path in (Path(str(harness.__file__)), ENTRY):
        h.update(path.read_bytes())
    return h.hexdigest()


def verdict_problems(slug: str, record: dict[str, Any] | None, outcome: str) -> list[Problem]:
    """Problems from the sandboxed run's record (pure: the record in, problems out)."""
    if record is None or not isinstance(record.get("checks"), list):
        return [error(drill_path(slug, "reference.py"), 1, 1, "drill-run-failed",
                      f"the drill's tests did not run in the sandbox ({outcome})")]
    out: list[Problem] = []
    for c in record["checks"]:
        if c.get("ok"):
            continue
        _, suite, name, message = [*str(c.get("message", "")).split("|", 3), "", "", "", ""][:4]
        out.append(error(drill_path(slug, "reference.py"), 1, 1, "drill-reference-fails",
                         f"the reference fails {suite}.{name}: {message}"))
    values = {v.get("name"): v.get("value") for v in record.get("values", []) if isinstance(v, dict)}
    if values.get("wrong_edge_failures") == 0:
        out.append(error(drill_path(slug, "edge_tests.py"), 1, 1, "drill-edge-too-weak",
                         "the edge-case tests all pass the known-wrong solution (wrong.py); "
                         "add the case it gets wrong"))
    elif "wrong_edge_failures" not in values:
        out.append(error(drill_path(slug, "reference.py"), 1, 1, "drill-run-failed",
                         f"the drill's check did not finish ({outcome})"))
    return out


def check_drills(root: Path, bank: Bank, *, trust_local: bool = False) -> list[Problem]:
    """Run each changed drill's check behind the sandbox; cached verdicts for the unchanged ones."""
    problems: list[Problem] = []
    now = wall(trust_local)
    for slug in sorted(bank.drills):
        key = drill_hash(bank, slug)
        cache = root / CACHE / f"{slug}.json"
        cached = read_json(cache)
        if isinstance(cached, dict) and cached.get("key") == key and wall_serves(cached.get("wall"), now):
            problems.extend(verdict_problems(slug, cached.get("record"), str(cached.get("outcome"))))
            continue
        record, outcome = run_check(root, bank.drill_sources[slug], trust_local=trust_local)
        found = verdict_problems(slug, record, outcome)
        problems.extend(found)
        if record is not None:
            write_json(cache, {"key": key, "wall": now, "record": record, "outcome": outcome})
    return problems


def run_check(root: Path, files: dict[str, str], *, trust_local: bool = False) -> tuple[dict[str, Any] | None, str]:
    """One sandboxed run of ``drill_entry`` over a drill's files: its record and a word on how it ended."""
    from ..verify.options import RunOptions
    from ..verify.runner import run_script

    options = RunOptions(extra_env=(("QBANK_DRILL", json.dumps(files)),), trust_local=trust_local)
    raw = run_script(root, ENTRY, TIMEOUT, options)
    if raw.timed_out:
        return None, "timed out"
    status = raw.status or {}
    if status.get("error"):
        return None, json.dumps(status["error"].get("message", "error"))[:300]
    return raw.record, "ran"
