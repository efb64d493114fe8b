"""Attack: a reader who joins between deploys (the daily refresh gives them a slot), then is refunded.

The deploy path the workflows run, against moto's S3 over HTTP: main.yml's keyslot step (record at
``$DEPLOY_PRIVATE/epoch.json``) and ``qbank deploy``, then refresh.yml's ``qbank paywall refresh`` the day
after a sale. The late reader takes the epoch key from the slot the refresh uploaded, keeps every key, is
refunded; the refresh locks their slot, and the next deploy edits a section and adds a page. Nothing new
may open with what they kept: the epoch they were let into must end, although no deploy ever saw them.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from qbank.cli import main
from qbank.deploy.plan import scan_site
from qbank.deploy.release import store_sealed
from qbank.deploy.s3 import S3Store, Target, execute, plan_deploy
from qbank.paywall.keys import derive, parse_key
from qbank.paywall.keyslots import KeyslotError, run_keyslots
from qbank.paywall.ledger import open_ledger
from qbank.paywall.recipient import keygen, load_identity_text
from qbank.paywall.refresh import refresh
from qbank.paywall.slots import open_entry, shard_of, shard_path

from ..deploy.conftest import _aws_env, bucket, s3, s3_endpoint  # noqa: F401  (fixtures)
from .fake_build import SITE_URL, fake_build
from .test_attack import AFTER, BEFORE, TODAY, attacker_reads


def bucket_files(client: Any, name: str, prefix: str) -> dict[str, bytes]:
    """Every object under a prefix: site path -> bytes (what anyone can fetch from the public site)."""
    out = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=name, Prefix=prefix + "/"):
        for obj in page.get("Contents", []):
            out[obj["Key"][len(prefix) + 1:]] = client.get_object(Bucket=name, Key=obj["Key"])["Body"].read()
    return out


def texts(kept: list[bytes], files: dict[str, bytes]) -> set[str]:
    """Every plaintext the kept keys open in any ciphertext file (the grace period keeps several per page)."""
    return {t for path, raw in files.items() if path.startswith("assets/premium/")
            for t in attacker_reads(kept, {path: raw}).values()}


def test_a_reader_let_in_by_the_refresh_then_refunded_reads_nothing_new(
    tmp_path: Path, s3: Any, bucket: str  # noqa: F811
) -> None:
    ledger = tmp_path / "ledger.sqlite3"
    with open_ledger(ledger) as book:
        (honest,) = book.mint(1)
        book.sell(honest, TODAY - dt.timedelta(days=5), "honest@example.com")
    key, pub, _ = keygen(tmp_path / "identity.key")
    identity = load_identity_text(key.read_text("ascii"), "identity")
    s3.create_bucket(Bucket=bucket + "-private")
    public, private = Target(bucket, "www"), Target(bucket + "-private", "www")
    endpoint = s3.meta.endpoint_url
    record = f"s3://{private.bucket}/{private.key('epoch.json')}"  # main.yml: "${DEPLOY_PRIVATE%/}/epoch.json"
    root = tmp_path / "repo"

    def deploy(pages: dict[str, dict[str, str]], today: dt.date) -> None:
        sealed = fake_build(root, pages, pub)
        run_keyslots(root / "site", sealed, identity, str(ledger), today, endpoint_url=endpoint, epoch=record)
        epoch_id = json.loads((root / "site/qbank-build.json").read_text())["release"]
        kept = root / ".qbank/release" / f"{epoch_id}.sealed.json"
        assert main(["deploy", "--target", f"s3://{bucket}/www", "--site-dir", str(root / "site"),
                     "--endpoint-url", endpoint, "--release", str(kept), "--private", f"s3://{private.bucket}/www",
                     "--site-url", SITE_URL]) == 0

    def epoch_key(files: dict[str, bytes], license_key: str) -> bytes | None:
        d = derive(parse_key(license_key))
        release = json.loads(files["qbank-build.json"])["release"]
        opened = open_entry(json.loads(files[shard_path(release, shard_of(d.identifier))]), d.identifier, d.kek)
        return None if opened is None else opened[1]

    deploy(BEFORE, TODAY)
    with open_ledger(ledger) as book:  # the shop's next batch of keys, minted and sold after the deploy
        (late,) = book.mint(1)
        book.sell(late, TODAY + dt.timedelta(days=1), "late@example.com")
    refresh(s3, public, private, identity, str(ledger), TODAY + dt.timedelta(days=1), endpoint_url=endpoint)
    live = bucket_files(s3, bucket, "www")
    stolen_epoch = epoch_key(live, late)
    assert stolen_epoch is not None  # the refresh let them in: they hold the live epoch's key
    assert attacker_reads([stolen_epoch], live)  # and it opens the live site (the attack tool works)

    with open_ledger(ledger) as book:
        book.revoke(late, "refund")
    refresh(s3, public, private, identity, str(ledger), TODAY + dt.timedelta(days=2), endpoint_url=endpoint)
    deploy(AFTER, TODAY + dt.timedelta(days=3))
    new = bucket_files(s3, bucket, "www")
    added = {AFTER["/questions/a/"]["0"], AFTER["/questions/c/"]["0"]}  # the edit and the new page
    stolen = texts([stolen_epoch], new)
    assert not stolen & added, f"a refunded reader opened {sorted(stolen & added)}"
    honest_key = epoch_key(new, honest)
    assert honest_key is not None and texts([honest_key], new) >= added


def unlocks(files: dict[str, bytes], page: str, license_key: str) -> bool:
    """What the browser does on a live page: its ciphertext file names the release, whose slot must open."""
    m = re.search(r'data-qb-file="([0-9a-f]{20}\.json)"', files[page].decode())
    assert m is not None
    release = json.loads(files[f"assets/premium/{m.group(1)}"])["release"]
    d = derive(parse_key(license_key))
    shard = files.get(shard_path(release, shard_of(d.identifier)))
    return shard is not None and open_entry(json.loads(shard), d.identifier, d.kek) is not None


def test_a_refresh_after_a_deploy_that_died_half_way_leaves_every_page_unlockable(
    tmp_path: Path, s3: Any, bucket: str  # noqa: F811
) -> None:
    """A re-keying deploy dies after its ciphertext, slots and qbank-build.json, before its pages: the
    live pages still name the previous epoch. The daily refresh must not retire that epoch's slots."""
    ledger = tmp_path / "ledger.sqlite3"
    with open_ledger(ledger) as book:
        honest, leaver = book.mint(2)
        book.sell(honest, TODAY, "honest@example.com")
        book.sell(leaver, TODAY, "leaver@example.com")
    _key_path, pub, _ = keygen(tmp_path / "identity.key")
    identity = load_identity_text(_key_path.read_text("ascii"), "identity")
    s3.create_bucket(Bucket=bucket + "-private")
    public, private = Target(bucket, "www"), Target(bucket + "-private", "www")
    endpoint = s3.meta.endpoint_url
    record, root, store = f"s3://{private.bucket}/www/epoch.json", tmp_path / "repo", S3Store(s3, public)

    def keyslots(pages: dict[str, dict[str, str]], today: dt.date) -> Path:
        sealed = fake_build(root, pages, pub)
        run_keyslots(root / "site", sealed, identity, str(ledger), today, endpoint_url=endpoint, epoch=record)
        epoch_id = json.loads((root / "site/qbank-build.json").read_text())["release"]
        kept = root / ".qbank/release" / f"{epoch_id}.sealed.json"
        store_sealed(s3, private, epoch_id, kept.read_bytes())
        return kept

    keyslots(BEFORE, TODAY)
    execute(plan_deploy(store, scan_site(root / "site"), datetime.now(UTC), timedelta(days=7)), store, root / "site")
    with open_ledger(ledger) as book:
        book.revoke(leaver, "refund")
    keyslots(AFTER, TODAY + dt.timedelta(days=1))  # a new epoch
    plan = plan_deploy(store, scan_site(root / "site"), datetime.now(UTC), timedelta(days=7))
    plan.actions = [a for a in plan.actions if a.phase in ("immutable", "keyslots", "static")]  # dies here
    execute(plan, store, root / "site")
    page = "questions/a/index.html"
    assert unlocks(bucket_files(s3, bucket, "www"), page, honest)  # half a deploy: readers still unlock
    try:
        refresh(s3, public, private, identity, str(ledger), TODAY + dt.timedelta(days=2), endpoint_url=endpoint)
    except KeyslotError as exc:
        assert "full" in str(exc), exc  # refusing, and saying what to do, is fine
    assert unlocks(bucket_files(s3, bucket, "www"), page, honest), "the refresh locked every reader out"


def test_the_deploy_and_the_refresh_keep_one_epoch_record() -> None:
    """main.yml's keyslot step and refresh.yml's refresh name the same record (the refresh's readers must
    land where the next deploy's decision reads them)."""
    workflows = Path(__file__).resolve().parents[2] / ".github/workflows"
    found = {name: re.findall(r'--epoch\s+("[^"]+")', (workflows / name).read_text("utf-8"))
             for name in ("main.yml", "refresh.yml")}
    assert found["main.yml"] == found["refresh.yml"] == ['"${DEPLOY_PRIVATE%/}/epoch.json"'], found
