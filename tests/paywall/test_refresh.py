# ruff: noqa: F811  (the moto fixtures imported from tests/deploy/conftest.py are parameters below)
"""The scheduled refresh's parts one at a time: which live release it reads (and every refusal), which
earlier slots it retires and how the plan changes, where the epoch record is, and who it records there.
The refresh end to end, through the command line, is tests/deploy/test_release.py."""

from __future__ import annotations

import datetime as dt
import json
import secrets
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from qbank.deploy.plan import MANIFEST_NAME, Action, Manifest, Plan
from qbank.deploy.s3 import Target
from qbank.epoch import store as epoch_store
from qbank.epoch.state import EpochState
from qbank.paywall.keyslots import KeyslotError
from qbank.paywall.recipient import keygen, load_public, seal
from qbank.paywall.refresh import epoch_location, live_release, record_readers, retire_old_slots

from ..deploy.conftest import _aws_env, s3, s3_endpoint  # noqa: F401  (fixtures: moto server over HTTP)

URL = "https://qbank.example/"
RID = "0123456789abcdef"


def sealed_bytes(tmp: Path, rid: str = RID, url: str = URL) -> bytes:
    _, pub, _ = keygen(tmp / f"id-{secrets.token_hex(4)}" / "identity.key")
    return seal(secrets.token_bytes(32), rid, url, load_public(pub.read_text(), "pub")).to_json()


# --- live_release -------------------------------------------------------------------------------------------


@pytest.fixture
def buckets(s3: Any) -> tuple[Any, Target, Target]:
    name = f"qbank-refresh-{secrets.token_hex(4)}"
    s3.create_bucket(Bucket=name)
    s3.create_bucket(Bucket=name + "-p")
    return s3, Target(name, "www"), Target(name + "-p", "x")


def put(client: Any, target: Target, path: str, body: bytes) -> None:
    client.put_object(Bucket=target.bucket, Key=target.key(path), Body=body)


def test_live_release_reads_the_build_record_and_its_sealed_key(
    tmp_path: Path, buckets: tuple[Any, Target, Target]
) -> None:
    client, public, private = buckets
    info = {"format": 1, "release": RID, "site_url": URL}
    put(client, public, "qbank-build.json", json.dumps(info).encode())
    put(client, private, f"releases/{RID}.sealed.json", sealed_bytes(tmp_path))
    got, sealed = live_release(client, public, private)
    assert got == info
    assert (sealed.release_id, sealed.site_url) == (RID, URL)


@pytest.mark.parametrize(
    "record",
    [
        {"format": 1, "site_url": URL},  # no release: a site built without the paywall
        {"format": 1, "release": 12, "site_url": URL},  # a release that is not a string
        [RID],  # not an object at all
    ],
)
def test_live_release_refuses_a_site_without_a_paywall_release(
    buckets: tuple[Any, Target, Target], record: object
) -> None:
    client, public, private = buckets
    put(client, public, "qbank-build.json", json.dumps(record).encode())
    with pytest.raises(KeyslotError, match=r"^the live site has no paywall release$"):
        live_release(client, public, private)


def test_live_release_refusals_name_what_is_missing_or_wrong(
    tmp_path: Path, buckets: tuple[Any, Target, Target]
) -> None:
    client, public, private = buckets
    with pytest.raises(KeyslotError) as nothing:
        live_release(client, public, private)
    assert str(nothing.value) == f"s3://{public.bucket}/www/qbank-build.json is missing: nothing deployed there yet"

    put(client, public, "qbank-build.json", json.dumps({"format": 1, "release": RID, "site_url": URL}).encode())
    with pytest.raises(KeyslotError) as unsealed:
        live_release(client, public, private)
    assert str(unsealed.value) == f"no sealed release {RID} under s3://{private.bucket}/x"

    put(client, private, f"releases/{RID}.sealed.json", b"{}")
    with pytest.raises(KeyslotError) as broken:
        live_release(client, public, private)
    assert str(broken.value).startswith(f"sealed release {RID}: ")
    assert broken.value.__cause__ is None and broken.value.__suppress_context__

    foreign = "the sealed release under the private prefix does not belong to live release " + RID
    # another release or site, sorting before and after the live one's
    others = (("0000000000000000", URL), ("fedcba9876543210", URL), (RID, "https://a.example/"), (RID, URL + "x/"))
    for rid, url in others:
        put(client, private, f"releases/{RID}.sealed.json", sealed_bytes(tmp_path, rid, url))
        with pytest.raises(KeyslotError) as other:
            live_release(client, public, private)
        assert str(other.value) == foreign


# --- retire_old_slots ---------------------------------------------------------------------------------------

WHEN = datetime(2026, 11, 30, 12, tzinfo=UTC)
OLD = "assets/keyslots/aaaaaaaaaaaaaaaa"
MINE = "assets/keyslots/" + RID


def a_plan(retained: list[str]) -> Plan:
    actions = [  # a refresh uploads only slot files, but the function keeps any action but the manifest
        Action("keyslots", f"{MINE}/00.json", "changed"),
        Action("static", "assets/app.css", "changed"),
        Action("pages", "index.html", "changed"),
        Action("sitemaps", "sitemap.xml", "changed"),
        Action("delete", "assets/gone.js", "expired"),
        Action("manifest", MANIFEST_NAME, "manifest"),
    ]
    manifest = Manifest({}, {p: WHEN.isoformat() for p in retained})
    return Plan(actions, manifest, 3, dict.fromkeys(retained, WHEN), ["/index.html"])


def test_retire_deletes_earlier_slots_now_and_writes_the_manifest_last() -> None:
    others = ["assets/keyslots.txt", "assets/keyslotsx/00.json", f"{MINE}/ff.json", "assets/app.js"]
    plan = a_plan([f"{OLD}/01.json", *others, f"{OLD}/00.json"])
    retire_old_slots(plan, MINE + "/")
    assert [(a.phase, a.path, a.reason) for a in plan.actions] == [
        ("keyslots", f"{MINE}/00.json", "changed"),
        ("static", "assets/app.css", "changed"),
        ("pages", "index.html", "changed"),
        ("sitemaps", "sitemap.xml", "changed"),
        ("delete", "assets/gone.js", "expired"),
        ("delete", f"{OLD}/00.json", "earlier release's keyslots"),
        ("delete", f"{OLD}/01.json", "earlier release's keyslots"),
        ("manifest", MANIFEST_NAME, "manifest"),
    ]
    assert plan.retained == dict.fromkeys(others, WHEN)
    assert plan.manifest.unreferenced == {p: WHEN.isoformat() for p in others}
    assert plan.invalidate == sorted(["/index.html", f"/{OLD}/00.json", f"/{OLD}/01.json"])
    assert plan.unchanged == 3


def test_retire_leaves_a_plan_without_earlier_slots_as_it_was() -> None:
    plan = a_plan(["assets/app.js", f"{MINE}/00.json"])
    before = (list(plan.actions), dict(plan.retained), dict(plan.manifest.unreferenced), list(plan.invalidate))
    retire_old_slots(plan, MINE + "/")
    assert (plan.actions, plan.retained, plan.manifest.unreferenced, plan.invalidate) == before


def test_retire_tolerates_a_retained_slot_the_manifest_no_longer_lists() -> None:
    plan = a_plan([f"{OLD}/00.json"])
    del plan.manifest.unreferenced[f"{OLD}/00.json"]
    retire_old_slots(plan, MINE + "/")
    assert plan.retained == {} and plan.manifest.unreferenced == {}
    assert [a.path for a in plan.actions][-2:] == [f"{OLD}/00.json", MANIFEST_NAME]


# --- the epoch record ---------------------------------------------------------------------------------------


def test_the_epoch_record_lives_under_the_private_prefix() -> None:
    assert epoch_location(Target("private-bucket", "x/y")) == "s3://private-bucket/x/y/epoch.json"
    assert epoch_location(Target("private-bucket", "")) == "s3://private-bucket/epoch.json"


def test_record_readers_adds_the_new_readers_and_writes_only_a_change(tmp_path: Path) -> None:
    from qbank.paywall.recipient import SealedRelease

    record = tmp_path / "epoch.json"
    sealed = SealedRelease.from_json(sealed_bytes(tmp_path))
    epoch_store.save(str(record), EpochState(RID, dt.date(2026, 11, 1), sealed, frozenset({"aa"})))
    record_readers(str(record), RID, frozenset({"aa", "bb"}), None)
    state = epoch_store.load(str(record))
    assert state is not None and state.readers == {"aa", "bb"}
    stamp = (record.stat().st_ino, record.stat().st_mtime_ns)  # a write replaces the file: a new inode
    record_readers(str(record), RID, frozenset({"bb"}), None)
    record_readers(str(record), "fedcba9876543210", frozenset({"cc"}), None)  # another epoch: not recorded
    assert (record.stat().st_ino, record.stat().st_mtime_ns) == stamp
    record_readers(str(tmp_path / "none.json"), RID, frozenset({"cc"}), None)  # no record yet: none made
    assert not (tmp_path / "none.json").exists()


def test_record_readers_reports_an_unreadable_record_as_a_keyslot_error(tmp_path: Path) -> None:
    record = tmp_path / "epoch.json"
    record.write_text("{not json")
    with pytest.raises(KeyslotError, match=r"^.*epoch\.json:1:2: not an epoch record") as err:
        record_readers(str(record), RID, frozenset({"aa"}), None)
    assert err.value.__cause__ is None and err.value.__suppress_context__


def test_the_module_imports_without_the_type_stubs() -> None:
    """mypy_boto3_s3 comes with the dev extra only: the refresh must import on an install without it."""
    code = "import sys; sys.modules['mypy_boto3_s3'] = None; import qbank.paywall.refresh"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_a_refresh_uploads_unless_asked_for_a_dry_run(tmp_path: Path, buckets: tuple[Any, Target, Target]) -> None:
    """On a bucket with a manifest and no site files, the refresh's plan is this release's slot files alone."""
    from qbank.deploy.plan import Manifest as Stored
    from qbank.paywall.ledger import open_ledger
    from qbank.paywall.recipient import load_identity_text
    from qbank.paywall.refresh import refresh

    client, public, private = buckets
    key, pub, _ = keygen(tmp_path / "env" / "identity.key")
    identity = load_identity_text(key.read_text("ascii"), "identity")
    put(client, public, "qbank-build.json", json.dumps({"format": 1, "release": RID, "site_url": URL}).encode())
    put(client, public, MANIFEST_NAME, Stored().to_json().encode())
    sealed = seal(secrets.token_bytes(32), RID, URL, load_public(pub.read_text(), "pub")).to_json()
    put(client, private, f"releases/{RID}.sealed.json", sealed)
    with open_ledger(tmp_path / "l.sqlite3") as book:
        book.mint(1)
    endpoint = client.meta.endpoint_url

    def slots() -> list[str]:
        listed = client.list_objects_v2(Bucket=public.bucket, Prefix=f"www/{MINE}/")
        return [o["Key"] for o in listed.get("Contents", [])]

    dry = refresh(client, public, private, identity, str(tmp_path / "l.sqlite3"), dt.date(2026, 11, 30),
                  endpoint_url=endpoint, dry_run=True)
    assert dry.result is None and len(dry.plan.uploads) == 256 and slots() == []
    done = refresh(client, public, private, identity, str(tmp_path / "l.sqlite3"), dt.date(2026, 11, 30),
                   endpoint_url=endpoint)
    assert done.result is not None and len(slots()) == 256
