"""One real build of the site fixture corpus, shared by every whole-build test of a worker."""

from __future__ import annotations

from pathlib import Path

import pytest

from qbank.build import BuildResult, build_site

from ..conftest import CASES, make_site_repo


@pytest.fixture(scope="session")
def site_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A committed repository holding the site fixture corpus."""
    return make_site_repo(tmp_path_factory.mktemp("site") / "repo", CASES / "site")


@pytest.fixture(scope="session")
def built(site_repo: Path) -> BuildResult:
    """``qbank build`` of the fixture repository: mkdocs plus every post-build check (links included)."""
    return build_site(site_repo)


@pytest.fixture(scope="session")
def site(built: BuildResult) -> Path:
    """The built site folder."""
    assert built.site_dir is not None, [p.text() for p in built.report.problems]
    return built.site_dir
