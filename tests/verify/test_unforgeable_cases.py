"""A small driver for this branch's attack cases (tests/verify/attacks/cases/): the real CLI on a site repo
with the case's overlay, every expected code reported, and no evidence the hostile line ran.

The shared harness (tests/verify/attacks/test_attacks.py) runs the same folders with its canaries; this
driver stays so the cases are exercised where that harness is not merged yet.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from ..conftest import CASES, REPO, make_site_repo

ATTACKS = Path(__file__).parent / "attacks" / "cases"
MINE = ["record-mutation", "result-files-os-exit", "obfuscated-import", "frozen-unsigned", "frozen-rogue-key"]


def codes(data: Any) -> set[str]:
    if isinstance(data, dict):
        found = {data["code"]} if isinstance(data.get("code"), str) else set()
        return found.union(*(codes(v) for v in data.values()))
    if isinstance(data, list):
        return set().union(*(codes(v) for v in data))
    return set()


@pytest.mark.parametrize("case", MINE)
def test_case(case: str, tmp_path: Path) -> None:
    folder = ATTACKS / case
    spec = yaml.safe_load((folder / "case.yaml").read_text())
    content = tmp_path / "content"
    shutil.copytree(CASES / "site", content)
    shutil.copytree(folder, content, dirs_exist_ok=True, ignore=shutil.ignore_patterns("case.yaml"))
    root = make_site_repo(tmp_path / "repo", content)
    evidence = Path(f"/tmp/qbank-attack-{case}")
    evidence.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in {"QBANK_GPU_SIGNING_KEY", "QBANK_FAKE_CUDA"}}
    env["PYTHONPATH"] = str(REPO / "src")
    run = subprocess.run(
        [sys.executable, "-m", "qbank.cli", spec["stage"], "--format", "json", "--root", str(root)],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert run.returncode == 1, run.stderr
    found = codes(json.loads(run.stdout))
    assert set(spec["expect"]) <= found, (found, run.stderr[-2000:])
    assert not evidence.exists()
    result = next(r for r in json.loads(run.stdout)["results"] if r["slug"] == "kv-budget")
    assert result["outcome"] == "error"
