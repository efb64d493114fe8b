"""The release split end to end: build (no ledger) -> keyslots -> deploy to moto -> daily refresh -> Chromium.

Real pieces throughout: `qbank build` of the paywall corpus, a SQLite ledger, moto's S3 server over HTTP,
the bucket's content served on 127.0.0.1, Debian's Chromium through Playwright.
"""

from __future__ import annotations

import base64
import datetime as dt
import functools
import http.server
import json
import os
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qbank.paywall.keyslots import load_sealed
from qbank.paywall.ledger import add_months, open_ledger
from qbank.paywall.recipient import identity_from_env, unseal

from ..capabilities import CHROMIUM, require
from ..deploy.conftest import _aws_env, bucket, s3, s3_endpoint  # noqa: F401  (fixtures)
from .conftest import make_identity, make_ledger, make_repo, qbank, sealed_release
from .test_browser import ARGS

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.xdist_group("paywall-site")]

KV_PATH = "/questions/kv-cache-long-context/"
SUMMARY = re.compile(r"^deploy: (\d+) uploaded \((\d+) B\).*$", re.M)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def origin(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An http server on 127.0.0.1 over a folder that mirrors the bucket's public prefix."""
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(mirror)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", mirror
    finally:
        httpd.shutdown()
        httpd.server_close()


def mirror_bucket(client: Any, name: str, prefix: str, dest: Path) -> dict[str, bytes]:
    """Copy every object under a prefix into ``dest`` (replaced); returns them all."""
    for child in dest.iterdir():
        shutil.rmtree(child) if child.is_dir() else child.unlink()
    out: dict[str, bytes] = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=name, Prefix=prefix):
        for obj in page.get("Contents", []):
            body = client.get_object(Bucket=name, Key=obj["Key"])["Body"].read()
            out[obj["Key"]] = body
            rel = obj["Key"][len(prefix):]
            if rel:
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                (dest / rel).write_bytes(body)
    return out


def forms(secret: bytes) -> list[bytes]:
    """The ways a secret could be written down: hex (both cases), base64, URL-safe base64."""
    b64 = base64.b64encode(secret)
    return [secret, secret.hex().encode(), secret.hex().upper().encode(), b64, b64.rstrip(b"="),
            base64.urlsafe_b64encode(secret).rstrip(b"=")]


def unlock_in_chromium(url: str, cases: list[tuple[str, str | None]]) -> None:
    """For each (key, reason): enter the key on the premium page; ``reason`` is the refusal expected, None opens it."""
    require("playwright", "chromium")  # fails under CI=true, skips with the reason elsewhere
    from playwright.sync_api import expect, sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            for key, reason in cases:
                context = browser.new_context()
                page = context.new_page()
                page.goto(url + KV_PATH)
                page.wait_for_load_state("networkidle")
                page.locator(".qb-unlock-open").first.click()
                page.fill("#qb-key", key)
                page.locator(".qb-dialog__submit").click()
                if reason:
                    error = page.locator(".qb-dialog__error")
                    expect(error).to_have_attribute("data-reason", reason)
                    expect(error).to_contain_text("revoked")
                    assert "QBCANARY" not in page.content()
                else:
                    expect(page.locator(".qb-unlocked").first).to_contain_text("QBCANARYALPHA7F3A")
                context.close()
        finally:
            browser.close()


def test_build_keyslots_deploy_refresh_revoke_in_chromium(
    tmp_path: Path, s3: Any, bucket: str, origin: tuple[str, Path]  # noqa: F811
) -> None:
    url, mirror = origin
    root = make_repo(tmp_path / "repo", site_url=url + "/")
    ledger = tmp_path / "private" / "ledger.sqlite3"
    keys = make_ledger(ledger)
    with open_ledger(ledger) as book:
        (other,) = book.mint(1)
        book.sell(other, dt.date.today() - dt.timedelta(days=10), "other@example.com")
    identity = make_identity(tmp_path / "deploy-env")
    s3.create_bucket(Bucket=bucket + "-private")
    endpoint = ["--endpoint-url", s3.meta.endpoint_url]
    public, private = f"s3://{bucket}/www", f"s3://{bucket}-private/releases-of-www"
    logs: list[str] = []

    def run(*args: str, env: dict[str, str] | None = None, code: int = 0) -> str:
        proc = qbank(*args, env=env)
        logs.extend([proc.stdout, proc.stderr])
        assert proc.returncode == code, proc.stdout + proc.stderr
        return proc.stdout + proc.stderr

    run("build", "--root", str(root), "--recipient", str(identity.pub), env={"QBANK_LEDGER": str(tmp_path / "none")})
    assert not (root / "site/assets/keyslots").exists()
    sealed = sealed_release(root)
    run("paywall", "keyslots", "--site", str(root / "site"), "--release", str(sealed), "--ledger", str(ledger),
        env=identity.env)
    assert not sealed.exists()  # the build's key is consumed: the site is sealed under the epoch now
    sealed = sealed_release(root)
    deploy = ["deploy", "--root", str(root), "--target", public, *endpoint, "--release", str(sealed)]
    # refusals first: nothing reaches either bucket
    said = run(*deploy, "--private", private, "--site-url", "https://qbank.example/", code=1)
    assert "built for " + url in said
    said = run(*deploy, "--private", f"s3://{bucket}/private", code=1)
    assert "public site's bucket" in said
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket)

    first = run(*deploy, "--private", private, "--site-url", url + "/")
    rid = json.loads((root / "site/qbank-build.json").read_text())["release"]
    assert f"sealed release {rid} stored at s3://{bucket}-private/releases-of-www/releases/{rid}.sealed.json" in first
    assert not [k for k in mirror_bucket(s3, bucket, "www/", mirror) if k.endswith(".sealed.json")]

    refresh = ["paywall", "refresh", "--target", public, "--private", private, "--ledger", str(ledger), *endpoint]
    unchanged = run(*refresh, env=identity.env)
    assert SUMMARY.search(unchanged).groups() == ("0", "0"), unchanged  # type: ignore[union-attr]

    with open_ledger(ledger) as book:
        book.revoke(keys.valid, "refund")
    revoked = run(*refresh, env=identity.env)
    n, size = SUMMARY.search(revoked).groups()  # type: ignore[union-attr]
    assert n == "1" and int(size) > 0, revoked  # the revoked license's shard, nothing else (+ the manifest)
    again = run(*refresh, env=identity.env)
    assert SUMMARY.search(again).groups() == ("0", "0")  # type: ignore[union-attr]
    print("first deploy:", SUMMARY.search(first).group(0))  # type: ignore[union-attr]
    print("unchanged refresh:", SUMMARY.search(unchanged).group(0))  # type: ignore[union-attr]
    print("revocation refresh:", SUMMARY.search(revoked).group(0))  # type: ignore[union-attr]

    objects = mirror_bucket(s3, bucket, "www/", mirror)
    unlock_in_chromium(url, [(keys.valid, "revoked"), (other, None)])

    # expiry, enforced by the site: on the day the other sale's six months end, its entry says so
    ends = add_months(dt.date.today() - dt.timedelta(days=10), 6)
    expired = run(*refresh, "--today", ends.isoformat(), env=identity.env)
    assert SUMMARY.search(expired).group(1) != "0"  # type: ignore[union-attr]
    mirror_bucket(s3, bucket, "www/", mirror)
    opened = qbank("paywall", "decrypt", "--root", str(root), "--site-dir", str(mirror), "--key", other, KV_PATH)
    assert opened.returncode == 1 and f"expired on {ends.isoformat()}" in opened.stderr, opened.stderr

    # no release key, key-encryption key, identity or buyer email in anything written or logged
    release_key = unseal(load_sealed(sealed), identity_from_env(identity.env))
    with open_ledger(ledger) as book:
        keks = [bytes(k) for (k,) in book.conn.execute("SELECT kek FROM licenses")]
        emails = [e.encode() for (e,) in book.conn.execute("SELECT email FROM licenses WHERE email IS NOT NULL")]
    ident = identity.key.read_bytes()
    needles = [f for s in [release_key, *keks] for f in forms(s)] + emails + [ident.split(b"\n")[1]]
    written = [p.read_bytes() for p in (root / "site").rglob("*") if p.is_file()]
    written += [p.read_bytes() for p in (root / ".qbank").rglob("*") if p.is_file()]
    (tmp_path / "private-copy").mkdir()
    private_objects = mirror_bucket(s3, bucket + "-private", "", tmp_path / "private-copy")
    assert list(private_objects) == [f"releases-of-www/releases/{rid}.sealed.json"]
    haystacks = written + list(objects.values()) + list(private_objects.values()) + [t.encode() for t in logs]
    assert len(needles) > 20 and len(haystacks) > 50
    for hay in haystacks:
        for needle in needles:
            assert needle not in hay


@pytest.fixture(autouse=True)
def _moto_credentials(_aws_env: None) -> None:  # noqa: F811
    """Dummy AWS credentials for moto, also seen by the qbank subprocesses (monkeypatched os.environ)."""
    assert os.environ["AWS_ACCESS_KEY_ID"] == "testing"
