"""Shared fixtures: a tiny valid corpus copied into a temporary repository, and site repositories to build."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from qbank.paywall.ledger import open_ledger

CASES = Path(__file__).parent / "cases"
REPO = Path(__file__).resolve().parents[1]
CASE_IGNORE = shutil.ignore_patterns(".qbank", "site", "__pycache__")
"""What a copy of a case folder leaves behind: local caches and builds made by running qbank inside it."""
COMMIT_DATE = "2026-11-02T12:00:00+00:00"


@pytest.fixture
def tiny_repo(tmp_path: Path) -> Path:
    """A copy of tests/cases/base: two topics, one company, one premium question."""
    root = tmp_path / "repo"
    shutil.copytree(CASES / "base", root, ignore=CASE_IGNORE)
    return root


CASE_THIN_MIN_WORDS = 20
"""The own-text floor for the tiny case corpora (placeholder paragraphs); the real corpus keeps mkdocs.yml's."""


def make_site_repo(root: Path, content: Path, site_url: str | None = None) -> Path:
    """A content set plus this repository's mkdocs.yml, hooks and site_src, committed to git.

    ``content`` is a case folder or the repository itself: its ``questions``, ``answers`` and ``verify``
    are copied. ``site_url`` replaces the configured line (the repository keeps
    ``site_url: !ENV [QBANK_SITE_URL, default]``; without ``site_url`` the copy reads ``$QBANK_SITE_URL`` too).
    """
    for part in ("questions", "answers", "verify"):
        shutil.copytree(content / part, root / part, ignore=CASE_IGNORE)
    for part in ("practice", "drills"):  # practice tests and code drills, where the content set has them
        if (content / part).is_dir():
            shutil.copytree(content / part, root / part, ignore=CASE_IGNORE)
    if (REPO / ".vendor").is_dir() and (root / "drills").is_dir():  # Pyodide for drills (`make vendor`)
        (root / ".vendor").symlink_to(REPO / ".vendor", target_is_directory=True)
    config = (REPO / "mkdocs.yml").read_text()
    if content != REPO:
        # the case corpora are a few placeholder paragraphs: the own-text floor is the real corpus's (see
        # tests/sitecheck/test_thin.py for the check itself, and tests/site for the real repository's build)
        config = config.replace("thin_min_words: 150", f"thin_min_words: {CASE_THIN_MIN_WORDS}")
    if site_url:
        config = re.sub(r"^site_url:.*$", f"site_url: {site_url}", config, count=1, flags=re.MULTILINE)
    (root / "mkdocs.yml").write_text(config)
    shutil.copytree(REPO / "hooks", root / "hooks", ignore=CASE_IGNORE)
    shutil.copytree(REPO / "site_src", root / "site_src")
    shutil.copytree(REPO / "paywall", root / "paywall")  # the committed release recipient (a public key)
    env = {**os.environ, "GIT_AUTHOR_DATE": COMMIT_DATE, "GIT_COMMITTER_DATE": COMMIT_DATE}
    for args in (
        ["init", "-q"],
        ["-c", "user.name=t", "-c", "user.email=t@example.org", "add", "-A"],
        ["-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "fixture"],
    ):
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)
    return root


@pytest.fixture(scope="session", autouse=True)
def _own_ledger(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Builds read an empty license ledger of the session's own, never the developer's default one.

    Tests that need licenses, or no ledger at all, name theirs in ``$QBANK_LEDGER`` themselves.
    """
    path = tmp_path_factory.mktemp("ledger") / "ledger.sqlite3"
    with open_ledger(path):
        pass
    before = os.environ.get("QBANK_LEDGER")
    os.environ["QBANK_LEDGER"] = str(path)
    yield path
    if before is None:
        os.environ.pop("QBANK_LEDGER", None)
    else:
        os.environ["QBANK_LEDGER"] = before


@pytest.fixture(scope="session")
def verified_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This repository's content, copied without any ``.qbank`` cache, with every script verified now, here.

    Tests that read verification results (derivations, records) read them from this copy: a verify-script
    regression fails them as it fails a clean clone, instead of hiding behind a developer's old cache.
    """
    from qbank.verify.engine import VerifyConfig, verify

    root = tmp_path_factory.mktemp("verified") / "repo"
    for part in ("questions", "answers", "verify"):
        shutil.copytree(REPO / part, root / part, ignore=CASE_IGNORE)
    shutil.copy(REPO / "mkdocs.yml", root)
    run = verify(root, VerifyConfig(jobs=2))
    failed = [r["slug"] for r in run.results if r["outcome"] != "pass"]
    assert not failed, f"verification scripts that do not pass in a clean copy: {failed}"
    return root
