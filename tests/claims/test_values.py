"""Where values come from: the verification store first; a script runs only when there is no store."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest

from qbank.claims import values as values_module
from qbank.claims.match import Declared

RECORD = {"api": 1, "values": [{"name": "kv", "kind": "claim", "value": 2.0**30, "unit": "B", "line": 7}], "checks": []}


def no_script(root: Path, slug: str) -> dict[str, Any] | None:
    raise AssertionError("a script ran although the store answered")


def test_a_stored_record_is_used_and_no_script_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    store = types.ModuleType("qbank.verify.store")
    store.latest_record = lambda root, slug: RECORD if slug == "a" else None  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "qbank.verify.store", store)
    monkeypatch.setattr(values_module, "_run_script", no_script)
    assert values_module.values_for(tmp_path, "a") == [Declared("kv", "claim", 2.0**30, "B", 7)]
    assert values_module.values_for(tmp_path, "b") is None  # no record: unverified, and still no script run


def test_without_a_store_the_script_runs_once_for_real(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "qbank.verify.store", None)  # import fails as before the engine is merged
    (tmp_path / "verify").mkdir()
    (tmp_path / "verify" / "a.py").write_text("from qbank.verify import claim\nclaim('kv', 2**30, unit='B')\n")
    got = values_module.values_for(tmp_path, "a")
    assert got is not None and [(v.name, v.value, v.unit, v.line) for v in got] == [("kv", 2.0**30, "B", 2)]
    assert values_module.values_for(tmp_path, "missing") is None


def test_records_without_values_are_unusable() -> None:
    assert values_module.record_values(None) is None
    assert values_module.record_values({"api": None, "outcome": "error"}) is None
    assert values_module.record_values({"values": [{"name": "x", "value": "NaN?"}]}) == []
