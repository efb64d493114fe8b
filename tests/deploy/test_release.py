"""Deploy's release checks and `qbank paywall refresh` against moto, on a small synthetic site with a real seal."""

from __future__ import annotations

import datetime as dt
import json
import os
import secrets
from pathlib import Path
from typing import Any

from qbank.paywall.ledger import open_ledger
from qbank.paywall.recipient import keygen, load_public, seal

from .conftest import SyntheticSite, qbank

URL = "https://qbank.example/"


def release_site(tmp: Path) -> tuple[Path, Path, dict[str, str], Path]:
    """A synthetic site with a paywall release: its record, its sealed key, an identity and a ledger."""
    site = SyntheticSite().write(tmp / "site")
    rid = secrets.token_hex(8)
    (site / "qbank-build.json").write_text(json.dumps({"format": 1, "release": rid, "site_url": URL}))
    key, pub, _ = keygen(tmp / "env" / "identity.key")
    sealed = tmp / ".qbank" / "release" / f"{rid}.sealed.json"
    sealed.parent.mkdir(parents=True)
    sealed.write_bytes(seal(secrets.token_bytes(32), rid, URL, load_public(pub.read_text(), "pub")).to_json())
    ledger = tmp / "ledger.sqlite3"
    with open_ledger(ledger) as book:
        sold, _unsold = book.mint(2)
        book.sell(sold, dt.date.today(), "buyer@example.com")
    env = dict(os.environ) | {"QBANK_RELEASE_IDENTITY_FILE": str(key)}
    step = qbank("paywall", "keyslots", "--site", str(site), "--release", str(sealed), "--ledger", str(ledger),
                 cwd=tmp, env=env)
    assert step.returncode == 0, step.stderr
    assert "256 shard files" in step.stdout and "2 licenses open it" in step.stdout
    # the build's key is consumed: the site is sealed under the epoch's key, kept under the epoch's name
    assert not sealed.exists()
    (sealed,) = (tmp / ".qbank" / "release").glob("*.sealed.json")
    assert json.loads((site / "qbank-build.json").read_text())["release"] == json.loads(sealed.read_text())["release"]
    return site, sealed, env, ledger


def test_deploy_refuses_what_it_must_not_publish(tmp_path: Path, s3: Any, bucket: str) -> None:
    site, sealed, env, _ = release_site(tmp_path)
    s3.create_bucket(Bucket=bucket + "-p")
    base = ["deploy", "--site-dir", str(site), "--target", f"s3://{bucket}/www", "--endpoint-url",
            s3.meta.endpoint_url]
    private = ["--release", str(sealed), "--private", f"s3://{bucket}-p/x"]
    wrong_url = qbank(*base, *private, cwd=tmp_path, env=env | {"QBANK_SITE_URL": "https://other.example/"})
    assert wrong_url.returncode == 1 and "built for https://qbank.example/" in wrong_url.stderr
    alone = qbank(*base, "--release", str(sealed), cwd=tmp_path, env=env)
    assert alone.returncode == 2 and "go together" in alone.stderr
    other = tmp_path / "other.sealed.json"
    other.write_text(json.dumps({**json.loads(sealed.read_text()), "release": "ffffffffffffffff"}))
    mismatched = qbank(*base, "--release", str(other), "--private", f"s3://{bucket}-p/x", cwd=tmp_path, env=env)
    assert mismatched.returncode == 1 and "the sealed file is ffffffffffffffff" in mismatched.stderr
    (site / "assets" / "stray.sealed.json").write_bytes(sealed.read_bytes())
    stray = qbank(*base, cwd=tmp_path, env=env)
    assert stray.returncode == 1 and "must never be published" in stray.stderr
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket)
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket + "-p")
    (site / "assets" / "stray.sealed.json").unlink()
    ok = qbank(*base, *private, "--site-url", URL.rstrip("/"), cwd=tmp_path, env=env)
    assert ok.returncode == 0, ok.stderr
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket + "-p")["Contents"]]
    assert keys == [f"x/releases/{sealed.name}"]


def test_refresh_uploads_changed_slots_only_and_refuses_without_a_deploy(tmp_path: Path, s3: Any, bucket: str) -> None:
    site, sealed, env, ledger = release_site(tmp_path)
    s3.create_bucket(Bucket=bucket + "-p")
    target, private = f"s3://{bucket}/www", f"s3://{bucket}-p/x"
    refresh = ["paywall", "refresh", "--target", target, "--private", private, "--ledger", str(ledger),
               "--endpoint-url", s3.meta.endpoint_url]
    before = qbank(*refresh, cwd=tmp_path, env=env)
    assert before.returncode == 1 and "nothing deployed there yet" in before.stderr
    deploy = qbank("deploy", "--site-dir", str(site), "--target", target, "--endpoint-url", s3.meta.endpoint_url,
                   "--release", str(sealed), "--private", private, cwd=tmp_path, env=env)
    assert deploy.returncode == 0, deploy.stderr
    same = qbank(*refresh, cwd=tmp_path, env=env)
    assert same.returncode == 0 and "deploy: 0 uploaded (0 B)" in same.stdout, same.stdout + same.stderr
    with open_ledger(ledger) as book:
        book.mint(1)  # a new key for the shop's pool: one shard changes
    more = qbank(*refresh, cwd=tmp_path, env=env)
    assert more.returncode == 0 and "deploy: 1 uploaded" in more.stdout, more.stdout
    # a bucket that lost a site file is not patched by a refresh: it asks for a full deploy
    s3.delete_object(Bucket=bucket, Key="www/index.html")
    s3.delete_object(Bucket=bucket, Key="www/questions/kv-cache/index.html")
    broken = qbank(*refresh, cwd=tmp_path, env=env)
    assert broken.returncode == 1 and "(index.html, ...): run a full `qbank deploy`" in broken.stderr  # the first
    # the wrong identity opens nothing
    key, _, _ = keygen(tmp_path / "stranger" / "id.key")
    for page in ("index.html", "questions/kv-cache/index.html"):
        s3.put_object(Bucket=bucket, Key=f"www/{page}", Body=(site / page).read_bytes())
    wrong = qbank(*refresh, cwd=tmp_path, env=env | {"QBANK_RELEASE_IDENTITY_FILE": str(key)})
    assert wrong.returncode == 1 and "sealed to another key" in wrong.stderr


def test_the_first_refresh_after_a_release_deletes_the_previous_release_slots(
    tmp_path: Path, s3: Any, bucket: str
) -> None:
    s3.create_bucket(Bucket=bucket + "-p")
    target, private = f"s3://{bucket}/www", f"s3://{bucket}-p/x"
    ids = []
    for name in ("a", "b"):
        site, sealed, env, ledger = release_site(tmp_path / name)
        ids.append(json.loads((site / "qbank-build.json").read_text())["release"])
        run = qbank("deploy", "--site-dir", str(site), "--target", target, "--endpoint-url", s3.meta.endpoint_url,
                    "--release", str(sealed), "--private", private, cwd=tmp_path, env=env)
        assert run.returncode == 0, run.stderr
    assert "256 kept in grace" in run.stdout  # release a's slots, for pages still cached at the edge

    def slot_keys(rid: str) -> list[str]:
        pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f"www/assets/keyslots/{rid}/")
        return [o["Key"] for page in pages for o in page.get("Contents", [])]

    assert len(slot_keys(ids[0])) == 256
    refresh = ["paywall", "refresh", "--target", target, "--private", private, "--ledger", str(ledger),
               "--endpoint-url", s3.meta.endpoint_url]
    done = qbank(*refresh, cwd=tmp_path, env=env)
    assert done.returncode == 0 and "0 uploaded (0 B)" in done.stdout and "256 deleted" in done.stdout, done.stdout
    assert slot_keys(ids[0]) == [] and len(slot_keys(ids[1])) == 256
    manifest = json.loads(s3.get_object(Bucket=bucket, Key="www/.qbank-manifest.json")["Body"].read())
    assert not [p for p in [*manifest["files"], *manifest["unreferenced"]] if ids[0] in p]
    again = qbank(*refresh, cwd=tmp_path, env=env)
    assert "0 uploaded (0 B)" in again.stdout and "0 deleted" in again.stdout, again.stdout
