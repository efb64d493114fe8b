"""The practice corpus (tests/cases/practice): verified once per session, then copied or built and served.

It is the paywall corpus plus a free question whose script declares the free test's keys, claims
added to the premium question's script for the premium test, a free sample test, a premium loop
test and one drill.
"""

from __future__ import annotations

import shutil
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from qbank.deploy.serve import make_server
from qbank.pipeline import check_all

from ..conftest import CASES
from ..paywall.conftest import Keys, make_identity, make_ledger, make_repo, rebuild

PRACTICE_CASE = CASES / "practice"


@pytest.fixture(scope="session")
def verified_practice(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The practice corpus with every script verified and every drill checked (records under .qbank/)."""
    root = tmp_path_factory.mktemp("practice-verified") / "repo"
    shutil.copytree(PRACTICE_CASE, root)
    _corpus, report = check_all(root)
    assert report.errors == 0, "\n".join(p.text() for p in report.problems)
    return root


@pytest.fixture
def practice_repo(verified_practice: Path, tmp_path: Path) -> Path:
    """A fresh copy of the verified practice corpus, records included, for a test to break."""
    root = tmp_path / "repo"
    shutil.copytree(verified_practice, root, symlinks=True)
    return root


@dataclass(frozen=True)
class Served:
    """The practice corpus built by `qbank build`, keyslots written, served with the production headers."""

    root: Path
    site: Path
    url: str
    keys: Keys


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="session")
def served_practice(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """Built once per session through the real CLI; `qbank serve --built`'s server (CSP, `_headers`)."""
    base = tmp_path_factory.mktemp("practice-site")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    root = make_repo(base / "repo", site_url=url + "/", content=PRACTICE_CASE)
    ledger = base / "private" / "ledger.sqlite3"
    keys = make_ledger(ledger)
    rebuild(root, ledger, make_identity(base / "deploy-env"))
    httpd = make_server(root / "site", port=port)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield Served(root, root / "site", url, keys)
    finally:
        httpd.shutdown()
        httpd.server_close()
