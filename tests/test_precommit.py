"""The pre-commit config runs: qbank check on changed content fails a broken answer and passes a good one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from .conftest import REPO


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_precommit_runs_qbank_check(tiny_repo: Path) -> None:
    shutil.copy(REPO / ".pre-commit-config.yaml", tiny_repo)
    venv_bin = Path(sys.executable).parent
    (tiny_repo / ".venv").mkdir()
    (tiny_repo / ".venv" / "bin").symlink_to(venv_bin)
    git(tiny_repo, "init", "-q")
    git(tiny_repo, "add", "-A")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tiny_repo.parent / "pre-commit-home")}
    precommit = [str(venv_bin / "pre-commit"), "run", "qbank-check", "--files"]

    ok = subprocess.run(
        [*precommit, "answers/base-question.md"], cwd=tiny_repo, env=env, capture_output=True, text=True, timeout=300
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr

    answer = tiny_repo / "answers" / "base-question.md"
    answer.write_text(answer.read_text().replace("\n///\n", "\n"))
    bad = subprocess.run(
        [*precommit, "answers/base-question.md"], cwd=tiny_repo, env=env, capture_output=True, text=True, timeout=300
    )
    assert bad.returncode == 1
    assert "answers/base-question.md:3:1: error: premium block is never closed" in bad.stdout + bad.stderr


def test_precommit_config_is_valid() -> None:
    venv_bin = Path(sys.executable).parent
    res = subprocess.run(
        [str(venv_bin / "pre-commit"), "validate-config", str(REPO / ".pre-commit-config.yaml")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stdout + res.stderr
