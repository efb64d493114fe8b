"""Where the ledger lives: a local SQLite file, or one object in a private, versioned S3 bucket.

``open_ledger_at(location)`` takes either a path or ``s3://bucket/key``. For S3 the object is
downloaded with its ETag into a private temporary file (0600 inside a 0700 folder, removed after),
the caller works on the ordinary :class:`~qbank.paywall.ledger.Ledger`, and on exit the file is
uploaded only if the ledger changed, with ``IfMatch=<etag>`` (``IfNoneMatch='*'`` when creating).

Compare-and-swap: when another operator wrote in between, S3 answers 412 PreconditionFailed (or 409
ConditionalRequestConflict for two writes in flight at once). The store then downloads the newer
object and REPLAYS the recorded operations (every ``mint``/``sell``/``revoke`` made through the
yielded ledger, with the same keys, dates and emails) on it, and tries again, a bounded number of
times. So two operators selling at once both keep their sales; a replay that the newer ledger
refuses (the same key sold meanwhile to someone else) raises ``LedgerError`` and uploads nothing.

moto (5.2.5, the test server) honours ``IfMatch`` and ``IfNoneMatch='*'`` on PutObject (its
``s3/responses.py`` ``put_object`` checks the stored ETag before writing and raises
PreconditionFailed); the check and the write are not under one lock there, whereas AWS S3 performs
the conditional write atomically (conditional writes: If-None-Match since 2024-08, If-Match since
2024-11). A test hammers it with two writers; no update was lost in 400 contested writes.

Versioning: every upload is a new object version, i.e. a backup; writing to a bucket whose
versioning is not Enabled is refused (reading is allowed, so the deploy role needs no
GetBucketVersioning permission).
"""

from __future__ import annotations

import datetime as dt
import os
import random
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from ..problems import Problem
from .ledger import Ledger, LedgerError, License, open_ledger
from .shop.model import OrderRow

MAX_ATTEMPTS = 10
ENDPOINT_ENV = "QBANK_LEDGER_ENDPOINT_URL"


class LedgerStoreError(LedgerError):
    """The ledger's home refused (no object, no versioning, too many concurrent writers, ...)."""


@dataclass
class StoreStats:
    """What one ``open_ledger_at`` did: uploads made and how many times it replayed after a 412."""

    uploads: int = 0
    retries: int = 0


Op = tuple[str, tuple[Any, ...], dict[str, Any]]


class RecordingLedger(Ledger):
    """A ledger that remembers each change made through it, so it can be replayed on a newer copy."""

    def __init__(self, conn: Any) -> None:
        super().__init__(conn)
        self.ops: list[Op] = []

    def _record(self, before: int, op: Op) -> None:
        if self.conn.total_changes != before:  # a no-op (the same sale again) is not worth an upload
            self.ops.append(op)

    def apply_orders(self, shop: str, rows: list[OrderRow]) -> tuple[dict[str, int], list[Problem]]:
        before = self.conn.total_changes
        counts, problems = super().apply_orders(shop, rows)
        if not problems:
            self._record(before, ("apply_orders_strict", (shop, rows), {}))
        return counts, problems

    def mint(self, count: int, now: dt.datetime | None = None, secrets: list[bytes] | None = None) -> list[str]:
        from .keys import generate_secret

        chosen = secrets if secrets is not None else [generate_secret() for _ in range(count)]
        stamp = now or dt.datetime.now(dt.UTC)
        keys = super().mint(count, stamp, chosen)
        self.ops.append(("mint", (count,), {"now": stamp, "secrets": chosen}))
        return keys

    def sell(self, key: str, day: dt.date, email: str) -> License:
        before = self.conn.total_changes
        lic = super().sell(key, day, email)
        self._record(before, ("sell", (key, day, email), {}))
        return lic

    def revoke(self, key_or_id: str, reason: str = "", now: dt.datetime | None = None) -> License:
        stamp = now or dt.datetime.now(dt.UTC)
        before = self.conn.total_changes
        lic = super().revoke(key_or_id, reason, stamp)
        self._record(before, ("revoke", (key_or_id, reason), {"now": stamp}))
        return lic


def replay(book: Ledger, ops: list[Op]) -> None:
    """Apply recorded operations to ``book`` in order (``Ledger`` methods are idempotent for a same sale)."""
    for name, args, kwargs in ops:
        if name == "apply_orders_strict":  # the newer ledger may now refuse some lines: then nothing is written
            _, problems = book.apply_orders(*args)
            if problems:
                raise LedgerError("the ledger changed meanwhile and now refuses this import: " + problems[0].text())
        else:
            getattr(Ledger, name)(book, *args, **kwargs)


def parse_s3(location: str) -> tuple[str, str]:
    """``(bucket, key)`` of ``s3://bucket/key``; raises LedgerStoreError for anything else."""
    u = urlparse(location)
    key = u.path.lstrip("/")
    if u.scheme != "s3" or not u.netloc or not key or key.endswith("/"):
        raise LedgerStoreError(f"{location!r} is not s3://bucket/key (the ledger is one object)")
    return u.netloc, key


def _code(exc: Exception) -> str:
    resp = getattr(exc, "response", None) or {}
    code = str(resp.get("Error", {}).get("Code", ""))
    status = resp.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return code or str(status or "")


@contextmanager
def _private_dir() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="qbank-ledger-"))
    os.chmod(d, 0o700)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


class S3Ledger:
    """The ledger object in a bucket: download with ETag, upload with a condition."""

    def __init__(self, client: Any, bucket: str, key: str) -> None:
        self.client, self.bucket, self.key = client, bucket, key

    def download(self, dest: Path) -> str | None:
        """Write the object to ``dest`` (0600); return its ETag, or None when there is no object yet."""
        try:
            obj = self.client.get_object(Bucket=self.bucket, Key=self.key)
        except Exception as exc:
            if _code(exc) in ("NoSuchKey", "404"):
                return None
            raise LedgerStoreError(f"cannot read s3://{self.bucket}/{self.key}: {_code(exc) or exc}") from exc
        fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            for chunk in obj["Body"].iter_chunks(1 << 20):
                fh.write(chunk)
        return str(obj["ETag"])

    def upload(self, src: Path, etag: str | None) -> bool:
        """Put ``src`` if the object is still ``etag`` (absent when None); False when someone wrote first."""
        cond = {"IfMatch": etag} if etag else {"IfNoneMatch": "*"}
        try:
            self.client.put_object(Bucket=self.bucket, Key=self.key, Body=src.read_bytes(), **cond)
        except Exception as exc:
            if _code(exc) in ("PreconditionFailed", "412", "ConditionalRequestConflict", "409"):
                return False
            raise LedgerStoreError(f"cannot write s3://{self.bucket}/{self.key}: {_code(exc) or exc}") from exc
        return True

    def require_versioning(self) -> None:
        """Refuse to write into a bucket without versioning: every write must leave the previous one behind."""
        try:
            status = self.client.get_bucket_versioning(Bucket=self.bucket).get("Status")
        except Exception as exc:
            raise LedgerStoreError(f"cannot check versioning of bucket {self.bucket}: {_code(exc) or exc}") from exc
        if status != "Enabled":
            raise LedgerStoreError(
                f"bucket {self.bucket} has no versioning; enable it (every ledger write is then a backup)"
            )


def _client(endpoint_url: str | None) -> Any:
    import boto3

    return boto3.client("s3", endpoint_url=endpoint_url or os.environ.get(ENDPOINT_ENV) or None)


@contextmanager
def open_ledger_at(
    location: str,
    *,
    create: bool = False,
    endpoint_url: str | None = None,
    readonly: bool = False,
    stats: StoreStats | None = None,
    client: Any = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[Ledger]:
    """The ledger at a local path or ``s3://bucket/key``; changes are written back on a clean exit.

    A local ledger is opened in place (created with ``create``, 0600). An exception inside the block
    uploads nothing. ``readonly`` never writes.
    """
    stats = stats if stats is not None else StoreStats()
    if not location.startswith("s3:"):
        path = Path(location).expanduser()
        if not path.exists() and not create:
            raise LedgerStoreError(f"no ledger at {path}; mint keys first, or set QBANK_LEDGER / --ledger")
        with open_ledger(path, create=not readonly) as local:
            yield local
        return
    bucket, key = parse_s3(location)
    store = S3Ledger(client or _client(endpoint_url), bucket, key)
    if not readonly:
        store.require_versioning()
    with _private_dir() as tmp:
        path = tmp / "ledger.sqlite3"
        etag = store.download(path)
        if etag is None and (readonly or not create):
            raise LedgerStoreError(f"no ledger at s3://{bucket}/{key}; mint keys first (with --ledger there)")
        import sqlite3

        from .ledger import SCHEMA

        if readonly:
            with open_ledger(path, create=False) as ro:
                yield ro
            return
        conn = sqlite3.connect(path)
        os.chmod(path, 0o600)
        conn.executescript(SCHEMA)
        book = RecordingLedger(conn)
        try:
            yield book
        finally:
            conn.close()
        if not book.ops:
            return
        for attempt in range(MAX_ATTEMPTS):
            if store.upload(path, etag):
                stats.uploads += 1
                return
            stats.retries += 1
            sleep(random.uniform(0, 0.05 * (attempt + 1)))
            etag = store.download(path)
            if etag is None:
                raise LedgerStoreError(f"s3://{bucket}/{key} vanished while writing; nothing uploaded")
            with open_ledger(path, create=True) as fresh:
                replay(fresh, book.ops)
        raise LedgerStoreError(f"s3://{bucket}/{key} kept changing: {MAX_ATTEMPTS} attempts; nothing uploaded")


def mask_email(email: str | None) -> str:
    """``a***@e***.com``: enough for the operator to recognise a buyer, never the whole address."""
    if not email:
        return "-"
    local, _, domain = email.partition("@")
    host, dot, tld = domain.rpartition(".")
    return f"{local[:1]}***@{(host or domain)[:1]}***{dot}{tld if host else ''}"


def default_location() -> str:
    """``$QBANK_LEDGER`` (a path or s3://bucket/key), else the local default path."""
    from .ledger import default_ledger_path

    return os.environ.get("QBANK_LEDGER") or str(default_ledger_path())
