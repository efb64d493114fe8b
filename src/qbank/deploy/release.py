"""What a deploy checks and keeps about the paywall release: the site's URL, and the sealed key's private home.

A built site carries ``qbank-build.json`` (its ``site_url`` and ``release`` id, nothing secret). The sealed
release key goes to a PRIVATE prefix, in another bucket than the public site, as
``releases/<release_id>.sealed.json``, where the scheduled refresh finds the live release's key by the
id the public ``qbank-build.json`` names.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .s3 import Target, with_retries

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

BUILD_INFO = "qbank-build.json"


class ReleaseError(ValueError):
    """A deploy the release checks refuse; nothing was uploaded."""


def sealed_key(release_id: str) -> str:
    """Where, under the private prefix, a release's sealed key is kept."""
    return f"releases/{release_id}.sealed.json"


def site_info(site: Path) -> dict[str, Any]:
    """The site's ``qbank-build.json`` (empty when the site has none: built before it existed)."""
    path = site / BUILD_INFO
    if not path.is_file():
        return {}
    try:
        doc = json.loads(path.read_text("utf-8"))
    except ValueError as exc:
        raise ReleaseError(f"{path}: not JSON ({exc})") from None
    return doc if isinstance(doc, dict) else {}


def check_site_url(info: dict[str, Any], expected: str | None) -> None:
    """Refuse a site built for another URL than the one this deploy serves."""
    if not expected:
        return
    built = info.get("site_url")
    if built is None:
        raise ReleaseError(f"the site has no {BUILD_INFO}: cannot tell which URL it was built for; rebuild it")
    if str(built).rstrip("/") != expected.rstrip("/"):
        raise ReleaseError(f"the site was built for {built}, this deploy serves {expected}: rebuild with that URL")


def check_site_holds_no_secret(site: Path) -> None:
    """A sealed release never goes to the public bucket, whatever put it into ``site/``."""
    stray = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.sealed.json"))
    if stray:
        raise ReleaseError(f"the site holds a sealed release ({stray[0]}): it must never be published")


def check_private(public: Target, private: Target) -> None:
    """The private prefix is in another bucket than the public site (a CDN may serve a whole bucket)."""
    if public.bucket == private.bucket:
        raise ReleaseError(
            f"--private s3://{private.bucket}/{private.prefix} is in the public site's bucket: use a private bucket"
        )


def check_release(info: dict[str, Any], sealed_release_id: str) -> None:
    """The sealed release is the one the site was built with."""
    if info.get("release") != sealed_release_id:
        raise ReleaseError(f"the site is release {info.get('release')}, the sealed file is {sealed_release_id}")


def store_sealed(client: S3Client, private: Target, release_id: str, body: bytes) -> str:
    """Upload a sealed release under the private prefix (before the site, so refresh always finds it)."""
    key = private.key(sealed_key(release_id))
    with_retries(
        lambda: client.put_object(
            Bucket=private.bucket, Key=key, Body=body, ContentType="application/json", CacheControl="no-store"
        )
    )
    return key


def fetch_object(client: S3Client, target: Target, path: str) -> bytes | None:
    """An object's bytes, or None when it does not exist."""
    from botocore.exceptions import ClientError

    try:
        resp = with_retries(lambda: client.get_object(Bucket=target.bucket, Key=target.key(path)))
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
            return None
        raise
    body: bytes = resp["Body"].read()
    return body
