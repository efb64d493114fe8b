"""Where an answer's verified values come from: the verification store's latest record.

``values_for`` reads ``qbank.verify.store.latest_record`` (the verification engine's cache) and never
runs a script when it exists. Until that engine is merged, it falls back to running the script once
in a subprocess with ``QBANK_VERIFY_OUT`` set (delete ``_run_script`` once the store is in).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .match import Declared

SCRIPT_TIMEOUT = 120


def record_values(record: Mapping[str, Any] | None) -> list[Declared] | None:
    """The declared values of a record, or None when there is no usable record."""
    if record is None:
        return None
    values = record.get("values")
    if not isinstance(values, list):
        return None
    out = []
    for item in values:
        if isinstance(item, Mapping) and "name" in item and isinstance(item.get("value"), (int, float)):
            out.append(Declared.from_record(item))
    return out


def _run_script(root: Path, slug: str) -> dict[str, Any] | None:
    """Fallback without the store: run ``verify/<slug>.py`` once and read the record it writes."""
    script = root / "verify" / f"{slug}.py"
    if not script.is_file():
        return None
    with tempfile.TemporaryDirectory(prefix="qbank-claims-") as tmp:
        out = Path(tmp) / "record.json"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "GITHUB_TOKEN"))}
        env["QBANK_VERIFY_OUT"] = str(out)
        facts = root / "verify" / "_lib" / "facts.yaml"
        if facts.is_file():
            env["QBANK_FACTS"] = str(facts)
        env.setdefault("QBANK_DEVICE", "cpu")
        try:
            subprocess.run(
                [sys.executable, str(script)],
                cwd=tmp,
                env=env,
                capture_output=True,
                timeout=SCRIPT_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return None
        try:
            data = json.loads(out.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None


def latest_record(root: Path, slug: str) -> dict[str, Any] | None:
    """The latest verification record of an answer's script, or None when it has none."""
    try:
        store = importlib.import_module("qbank.verify.store")
    except ImportError:
        return _run_script(root, slug)
    record: dict[str, Any] | None = store.latest_record(root, slug)
    return record


def values_for(root: Path, slug: str) -> list[Declared] | None:
    """The verified values of an answer (None when its script has no record yet)."""
    return record_values(latest_record(root, slug))
