"""Deploys against a real S3 endpoint over HTTP (moto's standalone server, see conftest.py)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse
from botocore.exceptions import ClientError

from qbank.deploy import MANIFEST_NAME, Action, DeployResult, Manifest, S3Store, execute, format_plan, scan_site
from qbank.deploy.headers import IMMUTABLE, SHORT, STATIC
from qbank.deploy.s3 import plan_deploy

from .conftest import SyntheticSite, references

T0 = datetime(2026, 1, 1, tzinfo=UTC)
GRACE = timedelta(days=7)


class Crash(Exception):
    """Stands in for a deploy killed midway."""


def deploy(store: S3Store, site: Path, now: datetime = T0, *, fail_after: int | None = None) -> DeployResult:
    """Plan against the bucket and run the plan; with ``fail_after`` the run dies after that many uploads."""
    plan = plan_deploy(store, scan_site(site), now, GRACE)
    done = 0

    def on_upload(_a: Action) -> None:
        nonlocal done
        done += 1
        if fail_after is not None and done >= fail_after:
            raise Crash(f"killed after {done} uploads")

    try:
        result = execute(plan, store, site, jobs=1, on_upload=on_upload)
    except Crash as exc:
        print(f"deploy: {exc}; manifest not written")
        raise
    print(result.summary())
    return result


def keys(s3: Any, bucket: str) -> dict[str, int]:
    """Object key (without the `site/` prefix) -> size."""
    out: dict[str, int] = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix="site/"):
        for obj in page.get("Contents", []):
            out[obj["Key"].removeprefix("site/")] = obj["Size"]
    return out


def get(s3: Any, bucket: str, path: str) -> bytes:
    """The body of a site object (raises ClientError NoSuchKey when missing)."""
    body: bytes = s3.get_object(Bucket=bucket, Key="site/" + path)["Body"].read()
    return body


def test_first_deploy_uploads_everything_with_headers(tmp_path: Path, s3: Any, bucket: str, store: S3Store) -> None:
    site = SyntheticSite().write(tmp_path / "site")
    local = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
    result = deploy(store, site)
    assert result.uploaded == len(local) and result.unchanged == 0 and result.manifest_written
    assert set(keys(s3, bucket)) == local | {MANIFEST_NAME}
    assert result.uploaded_bytes == sum((site / p).stat().st_size for p in local)

    def head(path: str) -> dict[str, Any]:
        h: dict[str, Any] = s3.head_object(Bucket=bucket, Key="site/" + path)
        return h

    css = next(p for p in local if p.startswith("assets/stylesheets/"))
    js = next(p for p in local if p.startswith("assets/javascripts/"))
    premium = next(p for p in local if p.startswith("assets/premium/"))
    expected = {
        css: ("text/css; charset=utf-8", IMMUTABLE, None),
        js: ("text/javascript; charset=utf-8", IMMUTABLE, None),
        premium: ("application/octet-stream", IMMUTABLE, None),
        "assets/keyslots/ab.json": ("application/json", SHORT, None),
        "index.html": ("text/html; charset=utf-8", SHORT, None),
        "questions/kv-cache/index.html": ("text/html; charset=utf-8", SHORT, None),
        "search/search_index.json": ("application/json", SHORT, None),
        "sitemap.xml": ("application/xml", SHORT, None),
        # the gzip sitemap is a gzip file, not an encoded XML response (see headers_for)
        "sitemap.xml.gz": ("application/gzip", SHORT, None),
        "assets/images/logo.svg": ("image/svg+xml", STATIC, None),
    }
    for path, (ctype, cache, encoding) in expected.items():
        h = head(path)
        assert (h["ContentType"], h["CacheControl"], h.get("ContentEncoding")) == (ctype, cache, encoding), path
        # the bucket serves the site's bytes, and the recorded hash is theirs (worked out here, not by the deploy)
        body = get(s3, bucket, path)
        assert body == (site / path).read_bytes(), path
        assert h["Metadata"]["sha256"] == hashlib.sha256(body).hexdigest(), path
    manifest = Manifest.from_json(get(s3, bucket, MANIFEST_NAME).decode())
    assert set(manifest.files) == local and manifest.unreferenced == {}
    # every non-hashed file may sit in an edge cache (even as a cached 404); hashed ones cannot
    assert "/questions/kv-cache/" in result.invalidate and "/" + css not in result.invalidate


def test_second_deploy_with_no_change_uploads_nothing(tmp_path: Path, s3: Any, bucket: str, store: S3Store) -> None:
    site = SyntheticSite().write(tmp_path / "site")
    first = deploy(store, site)
    second = deploy(store, site, T0 + timedelta(hours=1))
    assert second.uploaded == 0 and second.uploaded_bytes == 0 and second.deleted == 0
    assert second.unchanged == first.uploaded and second.invalidate == [] and not second.manifest_written


def test_one_answer_change_uploads_only_the_affected_files(
    tmp_path: Path, s3: Any, bucket: str, store: S3Store
) -> None:
    spec = SyntheticSite()
    site = spec.write(tmp_path / "site")
    deploy(store, site)
    spec.pages["questions/kv-cache/index.html"] = "KV cache sizing answer, corrected: 320 GiB per request"
    spec.write(site)
    plan = plan_deploy(store, scan_site(site), T0 + timedelta(hours=1), GRACE)
    print(format_plan(plan), "invalidate:", *plan.invalidate, sep="\n")
    assert [(a.path, a.reason) for a in plan.uploads] == [
        ("search/search_index.json", "changed"),
        ("questions/kv-cache/index.html", "changed"),
    ]
    assert plan.invalidate == ["/questions/kv-cache/", "/questions/kv-cache/index.html", "/search/search_index.json"]
    result = execute(plan, store, site)
    print(result.summary())
    assert result.uploaded == 2 and result.deleted == 0
    assert b"320 GiB" in get(s3, bucket, "questions/kv-cache/index.html")


def assert_site_whole(s3: Any, bucket: str, pages: list[str]) -> int:
    """Every page loads from the bucket, and so does every object it refers to; returns objects fetched."""
    fetched = 0
    for page in pages:
        html = get(s3, bucket, page).decode()
        fetched += 1
        for ref in sorted(references(page, html)):
            try:
                get(s3, bucket, ref)
            except ClientError as exc:
                raise AssertionError(f"{page} refers to {ref}, which is missing from the bucket") from exc
            fetched += 1
    return fetched


def _v2(spec: SyntheticSite) -> SyntheticSite:
    """A release that touches every kind of file: new CSS/JS hashes, new ciphertext and keyslots, a page gone."""
    spec.css, spec.js, spec.premium, spec.keyslot = "body { color: #222 }", "console.log('v2')", "ct-v2", '{"v": 2}'
    del spec.pages["questions/old-topic/index.html"]
    spec.pages["questions/new-topic/index.html"] = "A new page"
    return spec


# The v1 -> v2 deploy uploads, in order: 3 immutable (CSS, JS, ciphertext), 1 keyslot file, 1 static (search
# index), 5 pages (the new one first), 2 sitemaps. Kill it inside and at the end of every phase.
V2_PHASES = ["immutable"] * 3 + ["keyslots", "static"] + ["pages"] * 5 + ["sitemaps"] * 2


@pytest.mark.parametrize("kill_after", [1, 3, 4, 5, 6, 8, 10, 11])
def test_deploy_killed_midway_leaves_the_old_site_whole(
    tmp_path: Path, s3: Any, bucket: str, store: S3Store, kill_after: int
) -> None:
    v1, v2 = SyntheticSite().write(tmp_path / "v1"), _v2(SyntheticSite()).write(tmp_path / "v2")
    deploy(store, v1)
    old_manifest = get(s3, bucket, MANIFEST_NAME)
    old_pages = sorted(p for p in Manifest.from_json(old_manifest.decode()).files if p.endswith(".html"))
    plan = plan_deploy(store, scan_site(v2), T0 + timedelta(days=1), GRACE)
    assert [a.phase for a in plan.uploads] == V2_PHASES
    assert plan.uploads[5].path == "questions/new-topic/index.html"

    with pytest.raises(Crash):
        deploy(store, v2, T0 + timedelta(days=1), fail_after=kill_after)
    assert get(s3, bucket, MANIFEST_NAME) == old_manifest  # the manifest goes last
    assert assert_site_whole(s3, bucket, old_pages) > len(old_pages)

    result = deploy(store, v2, T0 + timedelta(days=1, minutes=5))
    assert result.manifest_written and result.deleted == 0
    local = {f.path: f for f in scan_site(v2)}
    assert {p: get(s3, bucket, p) for p in local} == {p: (v2 / p).read_bytes() for p in local}
    assert_site_whole(s3, bucket, sorted(p for p in local if p.endswith(".html")))
    assert_site_whole(s3, bucket, old_pages)  # edge-cached old pages still find their assets during the grace
    # the manifest still describes the old site, so completing re-sends what differs from it, no more
    assert result.uploaded == len(plan.uploads)


def test_objects_are_deleted_only_after_the_grace_period(tmp_path: Path, s3: Any, bucket: str, store: S3Store) -> None:
    spec = SyntheticSite()
    site = spec.write(tmp_path / "site")
    deploy(store, site)
    v1 = set(keys(s3, bucket))
    v2_at = T0 + timedelta(days=1)
    deploy(store, _v2(spec).write(site), v2_at)
    gone_from_site = v1 - {f.path for f in scan_site(site)} - {MANIFEST_NAME}
    assert "questions/old-topic/index.html" in gone_from_site and len(gone_from_site) == 4  # + css, js, ciphertext
    for at in (v2_at + timedelta(days=3), v2_at + GRACE - timedelta(seconds=1)):
        result = deploy(store, site, at)
        assert result.deleted == 0 and result.retained == len(gone_from_site)
        assert gone_from_site <= set(keys(s3, bucket))
    result = deploy(store, site, v2_at + GRACE)
    assert result.deleted == len(gone_from_site) and result.retained == 0
    assert not gone_from_site & set(keys(s3, bucket))
    assert "/questions/old-topic/" in result.invalidate
    assert Manifest.from_json(get(s3, bucket, MANIFEST_NAME).decode()).unreferenced == {}


def test_a_page_that_returns_within_the_grace_period_is_kept(
    tmp_path: Path, s3: Any, bucket: str, store: S3Store
) -> None:
    spec = SyntheticSite()
    site = spec.write(tmp_path / "site")
    deploy(store, site)
    body = spec.pages.pop("questions/batching/index.html")
    deploy(store, spec.write(site), T0 + timedelta(days=1))
    spec.pages["questions/batching/index.html"] = body
    deploy(store, spec.write(site), T0 + timedelta(days=2))
    result = deploy(store, site, T0 + timedelta(days=30))
    assert result.deleted == 0 and "questions/batching/index.html" in keys(s3, bucket)


def test_objects_left_by_a_dead_run_are_collected_after_the_grace(
    tmp_path: Path, s3: Any, bucket: str, store: S3Store
) -> None:
    spec = SyntheticSite()
    site = spec.write(tmp_path / "site")
    deploy(store, site)
    with pytest.raises(Crash):
        deploy(store, _v2(SyntheticSite()).write(tmp_path / "v2"), T0 + timedelta(days=1), fail_after=2)
    orphans = set(keys(s3, bucket)) - {f.path for f in scan_site(site)} - {MANIFEST_NAME}
    assert len(orphans) == 2  # the two hashed v2 assets the dead run managed to upload
    result = deploy(store, site, T0 + timedelta(days=2))  # v2 abandoned: v1 again
    assert result.uploaded == 0 and result.retained == 2
    result = deploy(store, site, T0 + timedelta(days=2) + GRACE)
    assert result.deleted == 2 and not orphans & set(keys(s3, bucket))


def test_a_deleted_object_is_uploaded_again(tmp_path: Path, s3: Any, bucket: str, store: S3Store) -> None:
    site = SyntheticSite().write(tmp_path / "site")
    deploy(store, site)
    s3.delete_object(Bucket=bucket, Key="site/questions/batching/index.html")
    result = deploy(store, site, T0 + timedelta(hours=1))
    assert result.uploaded == 1 and get(s3, bucket, "questions/batching/index.html")


class _Raw:
    def __init__(self, body: bytes) -> None:
        self.body = body

    def stream(self) -> list[bytes]:
        return [self.body]


def test_throttling_is_retried_with_backoff(tmp_path: Path, s3: Any, bucket: str) -> None:
    """The endpoint answers 503 SlowDown to the first puts; the deploy backs off and completes."""
    import boto3
    from botocore.config import Config

    # botocore's own retries off, so the test sees ours: they must hold even when botocore's give up
    client = boto3.client(
        "s3",
        endpoint_url=s3.meta.endpoint_url,
        region_name="us-east-1",
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}),
    )
    throttled: list[str] = []

    def slow_down(request: Any, **_kw: Any) -> AWSResponse | None:
        if request.method == "PUT" and len(throttled) < 5:
            throttled.append(request.url)
            body = b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"
            return AWSResponse(request.url, 503, {"Content-Type": "application/xml"}, _Raw(body))
        return None

    client.meta.events.register("before-send.s3.PutObject", slow_down)
    waits: list[float] = []
    store = S3Store(client, store_target(bucket), sleep=waits.append)
    site = SyntheticSite().write(tmp_path / "site")
    result = deploy(store, site)
    assert len(throttled) == 5 and len(waits) == 5
    assert result.uploaded == len(scan_site(site)) and result.manifest_written
    # the first file was refused five times in a row: its waits grow (full jitter under a doubling cap)
    assert all(0 <= w <= 0.5 * 2**n for n, w in enumerate(waits))


def store_target(bucket: str) -> Any:
    """The `site/` prefix of a bucket."""
    from qbank.deploy import Target

    return Target(bucket, "site")


def test_access_errors_are_not_retried(tmp_path: Path, s3: Any) -> None:
    waits: list[float] = []
    store = S3Store(s3, store_target("no-such-bucket-here"), sleep=waits.append)
    with pytest.raises(ClientError) as info:
        deploy(store, SyntheticSite().write(tmp_path / "site"))
    assert info.value.response["Error"]["Code"] == "NoSuchBucket" and waits == []
