"""Fixtures for delivery tests: a real S3 endpoint over HTTP, and small synthetic sites.

The endpoint is moto's standalone server (`moto[server]` on PyPI), run as a subprocess on a free 127.0.0.1
port. No S3 server ships in the package registries this project reaches (MinIO and friends are Go binaries
fetched from their own sites), and moto's server speaks the S3 REST API over real HTTP, so boto3 goes
through its whole stack: signing, retries, checksums, pagination, error parsing.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import itertools
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import pytest

from qbank.deploy import S3Store, Target

from ..conftest import CASE_IGNORE, CASE_THIN_MIN_WORDS

REPO = Path(__file__).resolve().parents[2]
_names = itertools.count()


def stop(proc: subprocess.Popen[Any]) -> None:
    """End a server the fixture started: politely, then by force."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of a moto S3 server started for this test session (one per xdist worker), stopped after it."""
    port = _free_port()
    # the server logs every request: into a file, since an unread pipe fills up and blocks the server
    log = tmp_path_factory.mktemp("moto") / "server.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"moto server exited early: {log.read_text(errors='replace')[-2000:]}")
            try:
                urllib.request.urlopen(url + "/moto-api/", timeout=2).close()
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    raise RuntimeError("moto server did not start within 60 s") from None
                time.sleep(0.2)
        yield url
    finally:
        stop(proc)


@pytest.fixture(autouse=True)
def _aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dummy credentials: moto accepts any; real ones must never be picked up by a test."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)


@pytest.fixture
def s3(s3_endpoint: str, _aws_env: None) -> Any:
    """A boto3 S3 client for the test endpoint."""
    return boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1")


@pytest.fixture
def bucket(s3: Any) -> str:
    """A fresh, empty bucket for one test."""
    name = f"qbank-test-{os.getpid()}-{next(_names)}"
    s3.create_bucket(Bucket=name)
    return name


@pytest.fixture
def store(s3: Any, bucket: str) -> S3Store:
    """The `site/` prefix of the test bucket, without waits between retries."""
    return S3Store(s3, Target(bucket, "site"), sleep=lambda _s: None)


def _h(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:8]


@dataclass
class SyntheticSite:
    """A few HTML pages referencing hashed CSS/JS, like mkdocs-material's output, small enough to reason about."""

    css: str = "body { color: #111 }"
    js: str = "console.log('v1')"
    pages: dict[str, str] = field(
        default_factory=lambda: {
            "index.html": "Home",
            "questions/kv-cache/index.html": "KV cache sizing answer",
            "questions/batching/index.html": "Continuous batching answer",
            "questions/old-topic/index.html": "A page later removed",
        }
    )
    premium: str = "ciphertext-v1"
    keyslot: str = '{"slots": ["v1"]}'

    def write(self, site: Path) -> Path:
        """Write the site into ``site`` (replacing it) and return it."""
        if site.exists():
            shutil.rmtree(site)
        css_name = f"assets/stylesheets/main.{_h(self.css)}.min.css"
        js_name = f"assets/javascripts/bundle.{_h(self.js)}.min.js"
        premium_name = f"assets/premium/{_h(self.premium)}.bin"
        files: dict[str, str | bytes] = {
            css_name: self.css,
            js_name: self.js,
            premium_name: self.premium,
            "assets/keyslots/ab.json": self.keyslot,
            "assets/images/logo.svg": "<svg xmlns='http://www.w3.org/2000/svg'/>",
            "search/search_index.json": '{"docs": [' + ",".join(f'"{t}"' for t in self.pages.values()) + "]}",
        }
        all_pages = {**self.pages, "404.html": "Not found"}
        for path, body in all_pages.items():
            depth = path.count("/")
            up = "../" * depth
            links = "".join(f'<a href="/{p.removesuffix("index.html")}">{p}</a>' for p in sorted(self.pages))
            files[path] = (
                f"<!doctype html><html><head><title>{body}</title>"
                f'<link rel="stylesheet" href="{up}{css_name}"><link rel="icon" href="/assets/images/logo.svg">'
                f'</head><body data-premium="{up}{premium_name}"><main>{body}</main>{links}'
                f'<script src="{up}{js_name}"></script></body></html>'
            )
        sitemap = "<urlset>" + "".join(f"<url><loc>/{p}</loc></url>" for p in sorted(self.pages)) + "</urlset>"
        files["sitemap.xml"] = sitemap
        files["sitemap.xml.gz"] = gzip.compress(sitemap.encode(), mtime=0)
        for rel, content in files.items():
            out = site / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                out.write_bytes(content)
            else:
                out.write_text(content, "utf-8")
        return site


_REF = re.compile(r'(?:href|src|data-premium)="([^"#?]+)"')


def references(page_path: str, html: str) -> set[str]:
    """Site paths a page refers to (links, styles, scripts, ciphertext), resolved against the page's URL."""
    from urllib.parse import urljoin

    out: set[str] = set()
    for ref in _REF.findall(html):
        if ref.startswith(("http:", "https:", "mailto:", "data:")):
            continue
        path = urljoin("/" + page_path, ref).lstrip("/")
        out.add(path + "index.html" if path == "" or path.endswith("/") else path)
    return out


def qbank(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run the real `qbank` command line in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "qbank.cli", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def make_repo(dest: Path) -> Path:
    """The tiny corpus of tests/cases/base with this repository's mkdocs config, hooks and hand-written pages."""
    shutil.copytree(REPO / "tests" / "cases" / "base", dest, ignore=CASE_IGNORE)
    config = (REPO / "mkdocs.yml").read_text()  # the tiny corpus: the case corpora's own-text floor
    (dest / "mkdocs.yml").write_text(config.replace("thin_min_words: 150", f"thin_min_words: {CASE_THIN_MIN_WORDS}"))
    shutil.copytree(REPO / "hooks", dest / "hooks", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "site_src", dest / "site_src")
    return dest


@pytest.fixture(scope="session")
def built_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose `site/` is a real `qbank build` of the tiny corpus (built once per session)."""
    root = make_repo(tmp_path_factory.mktemp("built") / "repo")
    proc = qbank("build", "--format", "text", cwd=root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (root / "site" / "_headers").is_file()
    return root


@contextlib.contextmanager
def serving(site: Path) -> Iterator[str]:
    """`qbank serve --built` on a free port as a subprocess; yields its base URL and stops it after."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "qbank.cli", "serve", "--built", "--port", "0", "--site-dir", str(site)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert match, f"qbank serve said: {line!r}"
        yield match.group(0)
    finally:
        stop(proc)
