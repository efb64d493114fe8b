"""Carry out a deploy plan against any S3-compatible store (AWS S3, Cloudflare R2, MinIO) with boto3."""

from __future__ import annotations

import functools
import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from .plan import MANIFEST_NAME, PHASES, Action, LocalFile, Manifest, Plan

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import ObjectIdentifierTypeDef

# S3 answers throttling with SlowDown/503 and transient faults with 500s; all are worth another try
RETRYABLE_CODES = frozenset(
    {"SlowDown", "ServiceUnavailable", "Throttling", "ThrottlingException", "RequestTimeout", "InternalError",
     "RequestTimeTooSkewed", "503", "500", "502", "504"}
)


@dataclass(frozen=True)
class Target:
    """A bucket and a key prefix (no leading or trailing slash; may be empty)."""

    bucket: str
    prefix: str

    def key(self, path: str) -> str:
        """The object key of a site path."""
        return f"{self.prefix}/{path}" if self.prefix else path


def parse_target(url: str) -> Target:
    """Parse `s3://bucket/prefix`; raises ValueError on anything else."""
    u = urlparse(url)
    if u.scheme != "s3" or not u.netloc:
        raise ValueError(f"target must look like s3://bucket/prefix, not {url!r}")
    return Target(u.netloc, u.path.strip("/"))


def make_client(endpoint_url: str | None = None, region: str | None = None) -> S3Client:
    """An S3 client with botocore's adaptive retries (credentials from the usual AWS environment/config)."""
    import boto3
    from botocore.config import Config

    config = Config(
        retries={"max_attempts": 8, "mode": "adaptive"},
        connect_timeout=10,
        read_timeout=60,
        # path-style works on every S3-compatible store; virtual-host style needs DNS for each bucket
        s3={"addressing_style": "path"} if endpoint_url else None,
    )
    client: S3Client = boto3.client("s3", endpoint_url=endpoint_url, region_name=region, config=config)
    return client


def is_retryable(exc: BaseException) -> bool:
    """Throttling, 5xx answers and network errors; never an access or validation error."""
    from botocore.exceptions import (
        ClientError,
        ConnectionClosedError,
        ConnectTimeoutError,
        EndpointConnectionError,
        ReadTimeoutError,
        ResponseStreamingError,
    )

    if isinstance(exc, ClientError):
        code = str(exc.response.get("Error", {}).get("Code", ""))
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        return code in RETRYABLE_CODES or status in (500, 502, 503, 504)
    return isinstance(
        exc, EndpointConnectionError | ConnectionClosedError | ConnectTimeoutError | ReadTimeoutError
        | ResponseStreamingError | ConnectionError | TimeoutError
    )


def with_retries(
    fn: Callable[[], Any], *, attempts: int = 6, base: float = 0.5, cap: float = 20.0,
    sleep: Callable[[float], None] = time.sleep,
) -> Any:
    """Call ``fn``; on a retryable error wait base*2^n (full jitter, capped) and try again, up to ``attempts``."""
    for n in range(attempts):
        try:
            return fn()
        except Exception as exc:
            if n == attempts - 1 or not is_retryable(exc):
                raise
            sleep(random.uniform(0, min(cap, base * 2**n)))
    raise AssertionError("unreachable")


class S3Store:
    """The objects under one prefix of one bucket."""

    def __init__(self, client: S3Client, target: Target, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self.client = client
        self.target = target
        self.sleep = sleep

    def _retry(self, fn: Callable[[], Any]) -> Any:
        return with_retries(fn, sleep=self.sleep)

    def read_manifest(self) -> Manifest | None:
        """The manifest of the last completed deploy, or None before the first."""
        from botocore.exceptions import ClientError

        try:
            key = self.target.key(MANIFEST_NAME)
            resp = self._retry(lambda: self.client.get_object(Bucket=self.target.bucket, Key=key))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise
        return Manifest.from_json(resp["Body"].read().decode("utf-8"))

    def list_objects(self) -> dict[str, int]:
        """Every object under the prefix: site path -> size."""
        prefix = self.target.key("") if self.target.prefix else ""
        out: dict[str, int] = {}
        paginator = self.client.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self.target.bucket, Prefix=prefix):
            for obj in page.get("Contents", []):
                out[obj["Key"][len(prefix):]] = obj["Size"]
        return out

    def put_file(self, site_dir: Path, f: LocalFile) -> None:
        """Upload one site file with its metadata (its sha256 also kept as object metadata)."""
        body = (site_dir / f.path).read_bytes()
        extra: dict[str, Any] = {}
        if f.headers.content_encoding:
            extra["ContentEncoding"] = f.headers.content_encoding
        self._retry(
            lambda: self.client.put_object(
                Bucket=self.target.bucket,
                Key=self.target.key(f.path),
                Body=body,
                ContentType=f.headers.content_type,
                CacheControl=f.headers.cache_control,
                Metadata={"sha256": f.sha256},
                **extra,
            )
        )

    def put_manifest(self, manifest: Manifest) -> None:
        """Write the manifest (never cached: it is read only by the next deploy)."""
        self._retry(
            lambda: self.client.put_object(
                Bucket=self.target.bucket,
                Key=self.target.key(MANIFEST_NAME),
                Body=manifest.to_json().encode("utf-8"),
                ContentType="application/json",
                CacheControl="no-store",
            )
        )

    def delete(self, paths: list[str]) -> None:
        """Delete objects, a thousand per request (deleting a missing key is not an error in S3)."""
        for i in range(0, len(paths), 1000):
            keys: list[ObjectIdentifierTypeDef] = [{"Key": self.target.key(p)} for p in paths[i : i + 1000]]
            self._retry(functools.partial(self._delete_keys, keys))

    def _delete_keys(self, keys: list[ObjectIdentifierTypeDef]) -> None:
        resp = self.client.delete_objects(Bucket=self.target.bucket, Delete={"Objects": keys, "Quiet": True})
        if resp.get("Errors"):
            first = resp["Errors"][0]
            raise RuntimeError(f"could not delete {first.get('Key')}: {first.get('Code')} {first.get('Message')}")


@dataclass
class DeployResult:
    """What a deploy did."""

    uploaded: int = 0
    uploaded_bytes: int = 0
    unchanged: int = 0
    deleted: int = 0
    retained: int = 0
    invalidate: list[str] = field(default_factory=list)
    manifest_written: bool = False

    def summary(self) -> str:
        """One line for logs and the step summary."""
        return (
            f"deploy: {self.uploaded} uploaded ({self.uploaded_bytes} B), {self.unchanged} unchanged, "
            f"{self.deleted} deleted, {self.retained} kept in grace, {len(self.invalidate)} paths to invalidate"
        )


def plan_deploy(store: S3Store, local: list[LocalFile], now: datetime, grace: Any) -> Plan:
    """Read the bucket's manifest and listing, and plan against them."""
    from .plan import make_plan

    return make_plan(local, store.read_manifest(), store.list_objects(), now, grace)


def execute(
    plan: Plan,
    store: S3Store,
    site_dir: Path,
    *,
    jobs: int = 8,
    on_upload: Callable[[Action], None] | None = None,
) -> DeployResult:
    """Run the plan phase by phase: uploads within a phase go in parallel, a phase ends before the next begins.

    An exception anywhere stops the deploy before the manifest is written; the bucket then holds the old
    site plus some new objects, and the next run (planned from the old manifest) uploads the rest.
    """
    result = DeployResult(unchanged=plan.unchanged, retained=len(plan.retained), invalidate=list(plan.invalidate))
    lock = threading.Lock()

    def upload(a: Action) -> None:
        assert a.file is not None
        store.put_file(site_dir, a.file)
        with lock:
            result.uploaded += 1
            result.uploaded_bytes += a.file.size
        if on_upload is not None:
            on_upload(a)

    for phase in PHASES:
        batch = [a for a in plan.actions if a.phase == phase]
        if not batch:
            continue
        if phase == "delete":
            store.delete([a.path for a in batch])
            result.deleted = len(batch)
        elif phase == "manifest":
            store.put_manifest(plan.manifest)
            result.manifest_written = True
        elif jobs <= 1:
            for a in batch:
                upload(a)
        else:
            _parallel(upload, batch, jobs)
    return result


def _parallel(fn: Callable[[Action], None], batch: list[Action], jobs: int) -> None:
    """Run ``fn`` over a batch on ``jobs`` threads; on the first failure cancel what has not started, re-raise."""
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        futures = [pool.submit(fn, a) for a in batch]
        for fut in futures:
            fut.result()
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
