"""Sourced input facts for verification scripts, read from ``verify/_lib/facts.yaml``.

Each fact keeps the source and tag it has in the file; ``fact()`` declares it as a ``given`` so the
answer can state it and the checker can bind it.
"""

from __future__ import annotations

import os
import sys
from functools import cache
from pathlib import Path
from typing import Any

import yaml

FACTS_ENV = "QBANK_FACTS"
FACTS_REL = Path("verify/_lib/facts.yaml")

# facts.yaml unit -> (qbank unit, multiplier to that unit)
UNIT_MAP: dict[str, tuple[str | None, float]] = {
    "GB": ("GB", 1.0),
    "TB/s": ("TB/s", 1.0),
    "GB/s": ("GB/s", 1.0),
    "GB/s per direction": ("GB/s", 1.0),
    "Gb/s": ("Gbit/s", 1.0),
    "TFLOPS": ("TFLOP/s", 1.0),
    "B": ("B", 1.0),
    "bytes": ("B", 1.0),
    "billion params": ("params", 1e9),
    "tokens": ("tokens", 1.0),
    "layers": ("layers", 1.0),
    "heads": ("heads", 1.0),
    "experts": ("experts", 1.0),
    "GPUs": ("GPUs", 1.0),
    "dims": ("dims", 1.0),
    "x": ("x", 1.0),
    "factor": ("x", 1.0),
    "fraction": ("fraction", 1.0),
    "probability": ("fraction", 1.0),
    "tokens/cycle": ("tokens", 1.0),
    "extra tokens": ("tokens", 1.0),
    "state dims": ("dims", 1.0),
    "elements/sequence": ("elements", 1.0),
}


def facts_path() -> Path:
    """Where the facts file is: ``$QBANK_FACTS``, else ``verify/_lib/facts.yaml`` above the script or cwd."""
    env = os.environ.get(FACTS_ENV)
    if env:
        return Path(env)
    starts = [Path(sys.argv[0]).resolve().parent] if sys.argv and sys.argv[0] else []
    starts.append(Path.cwd())
    for start in starts:
        for folder in (start, *start.parents):
            if (folder / FACTS_REL).is_file():
                return folder / FACTS_REL
    raise FileNotFoundError(f"cannot find {FACTS_REL}; set {FACTS_ENV}")


@cache
def load_facts(path: Path) -> dict[str, dict[str, Any]]:
    """``group.key`` -> the fact entry (value, unit, source, note), for every entry of the file."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    out: dict[str, dict[str, Any]] = {}
    for section, body in data.items():
        if section == "meta":
            continue
        groups = body.items() if isinstance(body, dict) else [(section, body)]
        for group, entries in groups:
            for entry in entries:
                out[f"{group}.{entry['key']}"] = entry
    return out


def lookup_fact(key: str) -> tuple[float, str | None, str]:
    """Value (converted), qbank unit and source text of a numeric fact ``group.key``."""
    path = facts_path()
    facts = load_facts(path)
    if key not in facts:
        raise KeyError(f"no fact {key!r} in {path}")
    entry = facts[key]
    value = entry["value"]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"fact {key!r} is not a number ({value!r}); declare it with given() and its source")
    unit, mult = UNIT_MAP.get(str(entry.get("unit")), (None, 1.0))
    source = f"{entry['source']} {entry.get('note', '')}".strip()
    return float(value) * mult, unit, source
