"""Deploys that cost what changed, end to end: real builds of the paywall corpus, the deploy job's keyslot
step, `qbank deploy` to moto's S3 server over HTTP (a versioned bucket, so an object written twice shows
two versions), the bucket served on 127.0.0.1 and opened in Debian's Chromium.

1. an edit of one premium answer uploads that page and its new ciphertext file, nothing else;
2. a revocation starts a new epoch: every premium page and file is sealed again, the previous epoch's
   objects stay (a page cached at the edge still opens) until the grace period ends, then not.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

import pytest

from qbank.paywall.ledger import open_ledger

from ..capabilities import CHROMIUM, require
from ..paywall.conftest import make_identity, make_ledger, make_repo, qbank, sealed_release
from ..paywall.test_browser import ARGS
from ..paywall.test_release_flow import mirror_bucket, origin  # noqa: F401  (fixture)
from .conftest import _aws_env, bucket, s3, s3_endpoint  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.xdist_group("paywall-site")]

KV = "questions/kv-cache-long-context/index.html"
KV_PATH = "/questions/kv-cache-long-context/"
UPLOAD = re.compile(r"^upload\s+\w+\s+(\S+)\s+\(", re.M)
BEFORE = "so fragmentation stops being the reason"
AFTER = "so fragmentation (QBCANARYEDITED) stops being the reason"


def versions(client: Any, name: str, prefix: str) -> dict[str, int]:
    """Object key (under the prefix) -> how many versions were ever written."""
    out: dict[str, int] = {}
    for page in client.get_paginator("list_object_versions").paginate(Bucket=name, Prefix=prefix):
        for v in page.get("Versions", []):
            key = v["Key"][len(prefix):]
            out[key] = out.get(key, 0) + 1
    return out


def unlock(url: str, page_path: str, key: str, expect: str | None, reason: str | None = None) -> None:
    """Enter ``key`` on a page in Chromium: ``expect`` must show unlocked, or ``reason`` be the refusal."""
    require("playwright", "chromium")  # fails under CI=true, skips with the reason elsewhere
    from playwright.sync_api import expect as pw_expect
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            page = browser.new_context().new_page()
            page.goto(url + page_path)
            page.wait_for_load_state("networkidle")
            page.locator(".qb-unlock-open").first.click()
            page.fill("#qb-key", key)
            page.locator(".qb-dialog__submit").click()
            if expect is not None:
                pw_expect(page.locator(".qb-unlocked", has_text=expect)).to_have_count(1)
            else:
                pw_expect(page.locator(".qb-dialog__error")).to_have_attribute("data-reason", str(reason))
                assert "QBCANARY" not in page.content()
        finally:
            browser.close()


def test_edit_uploads_one_page_and_its_ciphertext_and_a_revocation_rekeys_with_grace(
    tmp_path: Path, s3: Any, bucket: str, origin: tuple[str, Path]  # noqa: F811
) -> None:
    url, mirror = origin
    root = make_repo(tmp_path / "repo", site_url=url + "/")
    ledger = tmp_path / "private" / "ledger.sqlite3"
    keys = make_ledger(ledger)
    with open_ledger(ledger) as book:
        (leaver,) = book.mint(1)
        book.sell(leaver, dt.date.today() - dt.timedelta(days=10), "leaver@example.com")
    identity = make_identity(tmp_path / "deploy-env")
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    s3.create_bucket(Bucket=bucket + "-private")
    public, private = f"s3://{bucket}/www", f"s3://{bucket}-private/www"
    epoch = tmp_path / "private" / "epoch.json"

    def release(*extra: str) -> tuple[set[str], str]:
        """Build, keyslots, deploy; the paths uploaded and the deploy's output."""
        run = qbank("build", "--root", str(root), "--recipient", str(identity.pub),
                    env={"QBANK_LEDGER": str(tmp_path / "none")})
        assert run.returncode == 0, run.stderr
        built.append(run.stdout)
        run = qbank("paywall", "keyslots", "--site", str(root / "site"), "--release", str(sealed_release(root)),
                    "--ledger", str(ledger), "--epoch", str(epoch), env=identity.env)
        assert run.returncode == 0, run.stderr
        said = run.stdout
        run = qbank("deploy", "--root", str(root), "--target", public, "--endpoint-url", s3.meta.endpoint_url,
                    "--release", str(sealed_release(root)), "--private", private, "--site-url", url + "/", "-v",
                    *extra)
        assert run.returncode == 0, run.stdout + run.stderr
        return set(UPLOAD.findall(run.stdout)), said + run.stdout

    built: list[str] = []
    first, said = release()
    assert "new epoch (no epoch yet)" in said
    cards = len(list((root / "site/assets/cards").glob("*.png")))
    assert cards > 10 and f"social cards: {cards} drawn, 0 from the card store" in built[-1], built[-1]
    epoch_id = json.loads((root / "site/qbank-build.json").read_text())["release"]
    before = versions(s3, bucket, "www/")
    assert len(first) > 100 and set(before) == first | {".qbank-manifest.json"}
    old_kv = (root / "site" / KV).read_text()

    # 1. one premium answer edited: its page and its new ciphertext file, nothing else
    answer = root / "answers/kv-cache-long-context.md"
    assert BEFORE in answer.read_text()
    answer.write_text(answer.read_text().replace(BEFORE, AFTER))
    edited, said = release()
    assert "epoch continues" in said
    # an answer's text is not on its card: every card comes from the store, none is drawn
    assert f"social cards: 0 drawn, {cards} from the card store" in built[-1], built[-1]
    new_file = re.search(r'data-qb-file="([0-9a-f]{20}\.json)"', (root / "site" / KV).read_text())
    assert new_file is not None
    assert edited == {KV, f"assets/premium/{new_file.group(1)}"}, sorted(edited)
    after = versions(s3, bucket, "www/")
    assert {k for k in after if after[k] != before.get(k)} == edited | {".qbank-manifest.json"}
    assert "plan: 2 to upload" in said
    mirror_bucket(s3, bucket, "www/", mirror)
    unlock(url, KV_PATH, keys.valid, "QBCANARYEDITED")

    # 2. a reader lost: a new epoch; every premium page and file sealed again, the old epoch kept in grace
    with open_ledger(ledger) as book:
        book.revoke(leaver, "refund")
    rekeyed, said = release()
    assert "new epoch (1 reader(s) of the epoch may no longer read" in said
    new_epoch = json.loads((root / "site/qbank-build.json").read_text())["release"]
    assert new_epoch != epoch_id
    premium_pages = {p.relative_to(root / "site").as_posix() for p in (root / "site").rglob("*.html")
                     if new_epoch in p.read_text()}
    premium_files = {f"assets/premium/{p.name}" for p in (root / "site/assets/premium").iterdir()}
    slots = {f"assets/keyslots/{new_epoch}/{p.name}" for p in (root / f"site/assets/keyslots/{new_epoch}").iterdir()}
    assert rekeyed == premium_pages | premium_files | slots | {"qbank-build.json"}, sorted(rekeyed)
    listed = versions(s3, bucket, "www/")
    assert any(k.startswith(f"assets/keyslots/{epoch_id}/") for k in listed)  # the previous epoch, in grace
    mirror_bucket(s3, bucket, "www/", mirror)
    unlock(url, KV_PATH, leaver, None, "revoked")
    unlock(url, KV_PATH, keys.valid, "QBCANARYEDITED")
    (mirror / KV).write_text(old_kv)  # a page an edge cache still holds from before the re-key
    unlock(url, KV_PATH, keys.valid, "QBCANARYBETA91C2")

    # grace over: the previous epoch's objects are deleted, and the cached page no longer opens
    _, said = release("--grace-days", "0")
    gone = {k for k in listed if k.startswith((f"assets/keyslots/{epoch_id}/", "assets/premium/"))
            and k not in premium_files}
    assert gone and f"{len(gone)} deleted" in said, said
    mirror_bucket(s3, bucket, "www/", mirror)
    (mirror / KV).write_text(old_kv)
    unlock(url, KV_PATH, keys.valid, None, "stale")


@pytest.fixture(autouse=True)
def _moto_credentials(_aws_env: None) -> None:  # noqa: F811
    """Dummy AWS credentials for moto, also seen by the qbank subprocesses (monkeypatched os.environ)."""
