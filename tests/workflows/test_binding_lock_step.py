"""The checks workflow's *Binding lock* step, run as CI runs it: its own bash script from checks.yml, in a
git repository with a base commit, the real `qbank` on PATH and real (sandboxed) verification records.

A pull request that re-points a number and updates the lock passes, and its step summary names the
number and both values; one that leaves the lock stale fails, and the summary says so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from ..conftest import CASE_IGNORE, CASES, REPO

ANSWER = "answers/kv-cache-million-tokens.md"
SCRIPT = "verify/kv-cache-million-tokens.py"


def step_script() -> tuple[str, dict[str, str]]:
    doc = yaml.safe_load((REPO / ".github" / "workflows" / "checks.yml").read_text())
    step = next(s for s in doc["jobs"]["checks"]["steps"] if s.get("name") == "Binding lock")
    assert step["env"] == {"BASE_SHA": "${{ github.event.pull_request.base.sha || github.event.before }}"}
    return step["run"], step["env"]


def git(root: Path, *args: str) -> str:
    cmd = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.org", *args]
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip()


def qbank(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "qbank.cli", *args, "--root", str(root)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=root)


def run_step(root: Path, base: str, tmp: Path) -> tuple[int, str, str]:
    script, _ = step_script()
    summary, temp = tmp / "summary.md", tmp / "runner-temp"
    summary.write_text("")
    temp.mkdir(exist_ok=True)
    env = {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"]),
        "PYTHONPATH": str(REPO / "src"),
        "HOME": str(tmp),
        "LANG": "C.UTF-8",
        "BASE_SHA": base,
        "RUNNER_TEMP": str(temp),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    proc = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=root, env=env, capture_output=True, text=True, timeout=300,
    )
    return proc.returncode, proc.stdout, summary.read_text()


def test_the_step_summary_shows_what_a_change_makes_numbers_mean(tmp_path: Path) -> None:
    assert shutil.which("qbank", path=str(Path(sys.executable).parent)), "qbank is not installed in this venv"
    root = tmp_path / "repo"
    shutil.copytree(CASES / "base", root, ignore=CASE_IGNORE)
    shutil.copytree(CASES / "claims", root, dirs_exist_ok=True, ignore=CASE_IGNORE)
    verified = qbank(root, "verify")
    assert verified.returncode == 0, verified.stderr
    assert qbank(root, "claims", "--lock").returncode == 0
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    base = git(root, "rev-parse", "HEAD")

    # the change: the script renames the value that "8 KV heads" binds to, and the lock is rewritten
    script = root / SCRIPT
    script.write_text(script.read_text().replace('given("kv_heads", 8,', 'given("kv_heads_per_layer", 8,'))
    assert qbank(root, "verify").returncode == 0
    relocked = qbank(root, "claims", "--lock")
    assert f'{ANSWER}:3 "8 KV heads" now binds to kv_heads_per_layer (was: kv_heads)' in relocked.stdout
    git(root, "commit", "-qam", "rename")
    code, out, summary = run_step(root, base, tmp_path)
    assert code == 0, out
    assert "## Number bindings" in summary and "`claims.lock` is up to date." in summary
    assert f'{ANSWER}:3 "8 KV heads" now binds to kv_heads_per_layer (was: kv_heads)' in summary

    # the same change with the lock left as it was: the step fails and the summary says what is stale
    git(root, "checkout", "-q", base, "--", "claims.lock")
    code, out, summary = run_step(root, base, tmp_path)
    assert code == 1
    assert "is not up to date" in summary and summary.count('"8 KV heads" now binds to kv_heads_per_layer') == 2
    assert f'{ANSWER}:3 "8 KV heads" now binds to kv_heads_per_layer (was: kv_heads)' in out
    check = qbank(root, "check", "--no-verify")
    assert check.returncode == 1 and "[claims-lock-stale]" in check.stderr
