"""A built paywall site shared by the paywall tests: tiny premium corpus, real ledger, real `qbank build`,
then the deploy job's `qbank paywall keyslots` with a release identity of the test's own.

The site is the real one (the repository's mkdocs.yml, hooks and site_src), so what the tests check is
what readers get: question pages at ``/questions/<slug>/``, topic and company hubs with counts.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from qbank.paywall.keys import format_key, generate_secret
from qbank.paywall.ledger import open_ledger
from qbank.paywall.recipient import keygen

from ..conftest import CASES, make_site_repo

CASE = CASES / "paywall"
QBANK = [sys.executable, "-m", "qbank.cli"]


@dataclass(frozen=True)
class Keys:
    """One key per license state the tests need."""

    valid: str
    unsold: str
    expired: str
    revoked: str
    stranger: str  # well-formed, checksum fine, never minted


@dataclass(frozen=True)
class Built:
    """A repository built with the paywall on."""

    root: Path
    site: Path
    ledger: Path
    keys: Keys
    stdout: str
    stderr: str
    url: str
    identity: Identity


def make_repo(dest: Path, site_url: str | None = None, content: Path = CASE) -> Path:
    """A content set (the paywall test corpus by default) built through this repository's real site.

    mkdocs.yml, hooks and site_src are the repository's own, committed to git like a checkout.
    """
    # mkdocs-material's instant navigation maps sitemap URLs to the page's protocol and host but keeps
    # their port, so the served origin must be the configured one for it to engage
    return make_site_repo(dest, content, site_url=site_url)


def make_ledger(path: Path) -> Keys:
    """A ledger with a sold key, an unsold one, an expired one and a revoked one."""
    with open_ledger(path) as book:
        valid, unsold, expired, revoked = book.mint(4)
        book.sell(valid, dt.date.today() - dt.timedelta(days=3), "reader@example.com")
        book.sell(expired, dt.date(2020, 1, 15), "old@example.com")
        book.sell(revoked, dt.date.today(), "refund@example.com")
        book.revoke(revoked, "refunded")
    return Keys(valid, unsold, expired, revoked, format_key(generate_secret()))


@dataclass(frozen=True)
class Identity:
    """A release identity made for a test: the private key file and its public key (the recipient)."""

    key: Path
    pub: Path

    @property
    def env(self) -> dict[str, str]:
        """The deploy environment's view of it."""
        return {"QBANK_RELEASE_IDENTITY_FILE": str(self.key)}


def make_identity(folder: Path) -> Identity:
    """A fresh X25519 release identity (never the committed production recipient)."""
    key, pub, _ = keygen(folder / "release-identity.key")
    return Identity(key, pub)


def sealed_release(root: Path, site: Path | None = None) -> Path:
    """The sealed release file of the site last built in ``root``."""
    release = json.loads(((site or root / "site") / "qbank-build.json").read_text())["release"]
    return root / ".qbank" / "release" / f"{release}.sealed.json"


def keyslots(
    root: Path, ledger: Path, identity: Identity, today: str | None = None, site: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """The deploy job's step: keyslots of the last build from ``ledger``."""
    site = site or root / "site"
    args = ["paywall", "keyslots", "--site", str(site), "--release", str(sealed_release(root, site)),
            "--ledger", str(ledger)]
    run = qbank(*args, *(["--today", today] if today else []), env=identity.env)
    assert run.returncode == 0, run.stderr
    return run


def qbank(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real command line (with the session's empty ledger unless ``env`` names another)."""
    full = os.environ | (env or {})
    return subprocess.run([*QBANK, *args], capture_output=True, text=True, env=full, cwd=cwd, timeout=300)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def built_and_served(base: Path) -> Iterator[Built]:
    """The paywall corpus built through `qbank build` under ``base`` and served over http://127.0.0.1.

    Loopback is a secure context, so WebCrypto exists. The server starts first (the site folder is
    swapped in afterwards) so that the build's ``site_url`` can name its port.
    """
    site = base / "repo" / "site"
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        root = make_repo(base / "repo", site_url=url + "/")
        ledger = base / "private" / "ledger.sqlite3"
        keys = make_ledger(ledger)
        identity = make_identity(base / "deploy-env")
        run = rebuild(root, ledger, identity)
        yield Built(root, site, ledger, keys, run.stdout, run.stderr, url, identity)
    finally:
        httpd.shutdown()
        httpd.server_close()


def rebuild(root: Path, ledger: Path, identity: Identity) -> subprocess.CompletedProcess[str]:
    """A new release of the site: `qbank build` (no ledger in reach), then the deploy job's keyslot step."""
    run = qbank("build", "--root", str(root), "--recipient", str(identity.pub),
                env={"QBANK_LEDGER": str(root / "no-ledger-here")})
    assert run.returncode == 0, run.stderr
    keyslots(root, ledger, identity)
    return run


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    """The paywall corpus built once per session, served over http://127.0.0.1."""
    with built_and_served(tmp_path_factory.mktemp("paywall")) as b:
        yield b
