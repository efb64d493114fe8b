"""The plan's adapters: the shard count from pyproject.toml, recorded times from the index, plan files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qbank.verify.shards.plan import PlanError, make_plan, read_plan, select, shard_count
from qbank.verify.store import Index


def test_shard_count_from_pyproject(tmp_path: Path) -> None:
    assert shard_count(tmp_path) == 1  # no pyproject.toml
    (tmp_path / "pyproject.toml").write_text("[tool.qbank]\nverify-shards = 4\n")
    assert shard_count(tmp_path) == 4
    for bad in ("0", "true", '"3"', "300"):
        (tmp_path / "pyproject.toml").write_text(f"[tool.qbank]\nverify-shards = {bad}\n")
        with pytest.raises(PlanError, match="verify-shards must be an integer"):
            shard_count(tmp_path)


def test_recorded_run_times_come_from_the_index() -> None:
    index = Index()
    env = [1, "torch", "cpu"]
    index.put("a", {"env": env, "stats": {}, "result": {"outcome": "pass", "duration": 2.5}})
    index.put("b", {"env": env, "stats": {}, "result": {"outcome": "pass"}})
    assert index.durations() == {"a": 2.5} and index.envs == [env]


def test_a_plan_file_round_trips_and_garbage_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    plan = make_plan(["a", "b", "c"], {"a": 5.0, "b": 1.0}, 2)
    path.write_text(json.dumps(plan))
    assert read_plan(path) == plan and plan["shards"] == [["a"], ["b", "c"]]
    for text in ("{", json.dumps({**plan, "n": 3}), json.dumps({**plan, "shards": [["a"], [1]]}), "[]"):
        path.write_text(text)
        with pytest.raises(PlanError):
            read_plan(path)
    twice = {**plan, "shards": [["a", "b"], ["b", "c"]]}
    with pytest.raises(PlanError, match="twice"):
        select(["a", "b", "c"], (1, 2), {}, twice)
