"""The drills' verdict cache: an unchanged drill is not re-run, and the wall it ran behind is part of the key."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from qbank.practice import drills
from qbank.practice.load import load_bank

from .conftest import PRACTICE_CASE

PASSING = {"checks": [{"ok": True}], "values": [{"name": "wrong_edge_failures", "value": 1}]}


def test_a_trust_local_verdict_never_serves_a_sandboxed_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "repo"
    shutil.copytree(PRACTICE_CASE, root)
    bank, _problems = load_bank(root)
    assert bank.drills
    runs: list[bool] = []

    def run_check(_root: Path, _files: dict[str, str], *, trust_local: bool = False) -> tuple[dict[str, Any], str]:
        runs.append(trust_local)
        return PASSING, "ran"

    monkeypatch.setattr(drills, "run_check", run_check)
    n = len(bank.drills)
    assert drills.check_drills(root, bank, trust_local=True) == [] and runs == [True] * n
    assert drills.check_drills(root, bank, trust_local=True) == [] and len(runs) == n  # cached for itself
    assert drills.check_drills(root, bank) == [] and runs == [True] * n + [False] * n  # runs again, sandboxed
    assert drills.check_drills(root, bank) == [] and len(runs) == 2 * n
    assert drills.check_drills(root, bank, trust_local=True) == [] and len(runs) == 2 * n  # sandboxed serves it


def test_a_verdict_cached_before_the_wall_was_recorded_runs_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "repo"
    shutil.copytree(PRACTICE_CASE, root)
    bank, _problems = load_bank(root)
    slug = sorted(bank.drills)[0]
    drills.write_json(root / drills.CACHE / f"{slug}.json", {"key": drills.drill_hash(bank, slug), "record": PASSING,
                                                             "outcome": "ran"})
    runs: list[str] = []
    monkeypatch.setattr(drills, "run_check", lambda *_a, **_k: runs.append("run") or (PASSING, "ran"))
    drills.check_drills(root, bank)
    assert len(runs) == len(bank.drills)
