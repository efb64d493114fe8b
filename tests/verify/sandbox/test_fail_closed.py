"""No wall, no run: with user namespaces refused for real, every script is an error and nothing runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from qbank.verify.sandbox import probe
from tests.conftest import REPO, make_site_repo

SITE = REPO / "tests" / "cases" / "site"
# a user namespace whose own limit allows no further one: bwrap inside it fails as on a locked-down host
NO_USERNS = 'echo 1 > /proc/sys/user/max_user_namespaces && exec unshare --user --map-user=1000 --map-group=1000 "$@"'


def _cli(repo: Path, *args: str, refuse_userns: bool, ci: bool = False) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = str(REPO / "src")
    if ci:
        env["CI"] = "true"
    cmd = [sys.executable, "-m", "qbank.cli", "verify", "--force", "--format", "json", "--root", str(repo), *args]
    if refuse_userns:
        cmd = ["unshare", "--user", "--map-root-user", "sh", "-c", NO_USERNS, "qbank-test", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    if shutil.which("unshare") is None:
        pytest.fail("util-linux unshare is needed to refuse user namespaces for real")
    return make_site_repo(tmp_path / "repo", SITE)


def test_refused_user_namespaces_fail_closed(repo: Path) -> None:
    proc = _cli(repo, refuse_userns=True)
    assert proc.returncode == 1, proc.stderr
    results = json.loads(proc.stdout)["results"]
    assert results and all(r["outcome"] == "error" for r in results)
    for r in results:
        assert [p["code"] for p in r["problems"]] == ["verify-no-sandbox"]
        assert "max_*_namespaces" in r["problems"][0]["message"] or "namespace" in r["problems"][0]["message"]
        assert "--trust-local" in r["problems"][0]["message"]
    # nothing ran, nothing was stored: the next run with the wall runs them all
    assert not list((repo / ".qbank").rglob("entries/*.json"))


def test_trust_local_runs_loudly_where_the_wall_is_missing(repo: Path) -> None:
    proc = _cli(repo, "--trust-local", refuse_userns=True)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "WITHOUT the bubblewrap sandbox" in proc.stderr
    results = json.loads(proc.stdout)["results"]
    assert {r["outcome"] for r in results} == {"pass"}


def test_trust_local_is_refused_in_ci(repo: Path) -> None:
    proc = _cli(repo, "--trust-local", refuse_userns=False, ci=True)
    assert proc.returncode == 2
    assert "CI=true" in proc.stderr
    assert not list((repo / ".qbank").rglob("entries/*.json"))


def test_missing_bubblewrap_says_how_to_install(tmp_path: Path) -> None:
    why = probe.missing(str(tmp_path / "bwrap"))
    assert why is not None and "not installed" in why
    assert "apt-get install bubblewrap" in probe.HOW_TO_FIX


def test_the_wall_is_available_here() -> None:
    """This machine (and CI) must have it: the suite does not skip the sandbox."""
    assert probe.missing() is None


@pytest.mark.parametrize("command", ["check", "build"])
def test_trust_local_is_refused_in_ci_on_every_command_that_verifies(repo: Path, command: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "CI": "true"}
    cmd = [sys.executable, "-m", "qbank.cli", command, "--trust-local", "--root", str(repo)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert "CI=true" in proc.stderr
    assert not (repo / ".qbank").exists() and not (repo / "site").exists()
