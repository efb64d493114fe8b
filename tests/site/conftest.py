"""One real build of the site fixture corpus, shared by every whole-build test of a worker."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from qbank.build import BuildResult, build_site

from ..conftest import CASES, REPO

COMMIT_DATE = "2026-11-02T12:00:00+00:00"


def make_site_repo(root: Path) -> Path:
    """The fixture corpus plus this repository's mkdocs.yml, hooks and site_src, committed to git."""
    shutil.copytree(CASES / "site", root)
    shutil.copy(REPO / "mkdocs.yml", root / "mkdocs.yml")
    shutil.copytree(REPO / "hooks", root / "hooks", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "site_src", root / "site_src")
    env = {**os.environ, "GIT_AUTHOR_DATE": COMMIT_DATE, "GIT_COMMITTER_DATE": COMMIT_DATE}
    for args in (
        ["init", "-q"],
        ["-c", "user.name=t", "-c", "user.email=t@example.org", "add", "-A"],
        ["-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "fixture"],
    ):
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)
    return root


@pytest.fixture(scope="session")
def site_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A committed repository holding the site fixture corpus."""
    return make_site_repo(tmp_path_factory.mktemp("site") / "repo")


@pytest.fixture(scope="session")
def built(site_repo: Path) -> BuildResult:
    """``qbank build`` of the fixture repository: mkdocs plus every post-build check (links included)."""
    return build_site(site_repo)


@pytest.fixture(scope="session")
def site(built: BuildResult) -> Path:
    """The built site folder."""
    assert built.site_dir is not None, [p.text() for p in built.report.problems]
    return built.site_dir
