"""The ledger store's parts against an S3 stand-in held in memory: what each S3 answer becomes, the
conditions a write carries, the retry loop to its bound, and the small helpers. moto's real server, with
real conditional writes and two writers at once, is tests/paywall/test_ledger_store.py."""

from __future__ import annotations

import datetime as dt
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from qbank.paywall.ledger import LedgerError, default_ledger_path, open_ledger
from qbank.paywall.ledger_store import (
    MAX_ATTEMPTS,
    LedgerStoreError,
    S3Ledger,
    StoreStats,
    default_location,
    mask_email,
    open_ledger_at,
    parse_s3,
)

DAY = dt.date(2026, 11, 2)


class Refused(Exception):
    """What botocore raises: an exception carrying the parsed response."""

    def __init__(self, code: str = "", status: int | None = None) -> None:
        super().__init__(f"refused {code or status}")
        error = {"Code": code} if code else {}
        self.response: dict[str, Any] = {"Error": error, "ResponseMetadata": {"HTTPStatusCode": status}}


class Body:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def iter_chunks(self, size: int) -> Iterator[bytes]:
        for i in range(0, len(self.data), 7):  # small chunks: the copy must join them all
            yield self.data[i : i + 7]


class FakeS3:
    """One bucket, one object; versioning status and failures set by the test; every put is recorded."""

    def __init__(self, versioning: str | None = "Enabled") -> None:
        self.data: bytes | None = None
        self.version = 0
        self.versioning = versioning
        self.puts: list[dict[str, Any]] = []
        self.get_error: Exception | None = None
        self.put_error: Exception | None = None
        self.versioning_error: Exception | None = None
        self.before_put: Callable[[], None] | None = None  # another operator writing first

    @property
    def etag(self) -> str:
        return f'"v{self.version}"'

    def get_object(self, Bucket: str, Key: str) -> dict[str, Any]:
        if self.get_error is not None:
            raise self.get_error
        if self.data is None:
            raise Refused("NoSuchKey", 404)
        return {"Body": Body(self.data), "ETag": self.etag}

    def put_object(self, Bucket: str, Key: str, Body: bytes, **cond: str) -> dict[str, Any]:
        self.puts.append({"Bucket": Bucket, "Key": Key, **cond})
        if self.before_put is not None:
            self.before_put()
        if self.put_error is not None:
            raise self.put_error
        if ("IfMatch" in cond and cond["IfMatch"] != self.etag) or ("IfNoneMatch" in cond and self.data is not None):
            raise Refused("PreconditionFailed", 412)
        self.data, self.version = Body, self.version + 1
        return {"ETag": self.etag}

    def get_bucket_versioning(self, Bucket: str) -> dict[str, Any]:
        if self.versioning_error is not None:
            raise self.versioning_error
        return {} if self.versioning is None else {"Status": self.versioning}


def a_ledger(tmp_path: Path, keys: int = 2) -> tuple[bytes, list[str]]:
    path = tmp_path / "seed.sqlite3"
    with open_ledger(path) as book:
        minted = book.mint(keys)
    return path.read_bytes(), minted


# --- parse_s3, mask_email, default_location -----------------------------------------------------------


def test_parse_s3_takes_one_object_and_nothing_else() -> None:
    assert parse_s3("s3://bucket/private/ledger.sqlite3") == ("bucket", "private/ledger.sqlite3")
    assert parse_s3("s3://bucket//l") == ("bucket", "l")
    for bad in ("s3://bucket", "s3://bucket/", "s3://bucket/folder/", "s3:///key", "https://bucket/key", "bucket/key"):
        with pytest.raises(LedgerStoreError) as err:
            parse_s3(bad)
        assert str(err.value) == f"{bad!r} is not s3://bucket/key (the ledger is one object)"


@pytest.mark.parametrize(
    ("email", "masked"),
    [
        ("ann@example.org", "a***@e***.org"),
        ("bob@mail.example.co.uk", "b***@m***.uk"),
        ("nodomain", "n***@***"),
        ("x@localhost", "x***@l***"),
        ("", "-"),
        (None, "-"),
    ],
)
def test_mask_email_keeps_one_letter_of_each_part_and_the_last_label(email: str | None, masked: str) -> None:
    assert mask_email(email) == masked


def test_default_location_is_qbank_ledger_or_the_local_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QBANK_LEDGER", "s3://bucket/l.sqlite3")
    assert default_location() == "s3://bucket/l.sqlite3"
    monkeypatch.setenv("QBANK_LEDGER", "")
    assert default_location() == str(default_ledger_path())
    monkeypatch.delenv("QBANK_LEDGER")
    assert default_location() == str(default_ledger_path())


# --- download, upload, versioning -------------------------------------------------------------------------


def test_download_copies_every_chunk_privately_and_returns_the_etag(tmp_path: Path) -> None:
    client = FakeS3()
    client.data, client.version = bytes(range(256)) * 3, 4
    dest = tmp_path / "copy"
    assert S3Ledger(client, "b", "k").download(dest) == '"v4"'
    assert dest.read_bytes() == bytes(range(256)) * 3
    assert stat.S_IMODE(dest.stat().st_mode) == 0o600
    dest.write_bytes(b"x" * 2000)  # an older, longer copy is replaced, not overwritten in part
    assert S3Ledger(client, "b", "k").download(dest) == '"v4"'
    assert dest.read_bytes() == bytes(range(256)) * 3


@pytest.mark.parametrize("missing", [Refused("NoSuchKey", 404), Refused("", 404), Refused("404")])
def test_download_of_no_object_is_none(tmp_path: Path, missing: Exception) -> None:
    client = FakeS3()
    client.get_error = missing
    assert S3Ledger(client, "b", "k").download(tmp_path / "copy") is None
    assert not (tmp_path / "copy").exists()


@pytest.mark.parametrize(
    ("error", "said"),
    [(Refused("AccessDenied", 403), "AccessDenied"), (Refused("", 500), "500"), (OSError("no route"), "no route")],
)
def test_download_and_upload_failures_name_the_object_and_the_reason(
    tmp_path: Path, error: Exception, said: str
) -> None:
    client = FakeS3()
    client.get_error = client.put_error = error
    store = S3Ledger(client, "b", "k/l.sqlite3")
    with pytest.raises(LedgerStoreError) as read:
        store.download(tmp_path / "copy")
    assert str(read.value) == f"cannot read s3://b/k/l.sqlite3: {said}" and read.value.__cause__ is error
    (tmp_path / "copy").write_bytes(b"ledger")
    with pytest.raises(LedgerStoreError) as write:
        store.upload(tmp_path / "copy", '"v1"')
    assert str(write.value) == f"cannot write s3://b/k/l.sqlite3: {said}" and write.value.__cause__ is error


def test_upload_is_conditional_on_the_etag_or_on_no_object(tmp_path: Path) -> None:
    src = tmp_path / "copy"
    src.write_bytes(b"ledger")
    client = FakeS3()
    store = S3Ledger(client, "b", "k")
    assert store.upload(src, None) is True
    assert store.upload(src, None) is False  # created meanwhile by someone else
    assert store.upload(src, '"v1"') is True
    assert store.upload(src, '"v1"') is False  # changed meanwhile
    assert client.puts == [
        {"Bucket": "b", "Key": "k", "IfNoneMatch": "*"},
        {"Bucket": "b", "Key": "k", "IfNoneMatch": "*"},
        {"Bucket": "b", "Key": "k", "IfMatch": '"v1"'},
        {"Bucket": "b", "Key": "k", "IfMatch": '"v1"'},
    ]
    assert client.data == b"ledger"


@pytest.mark.parametrize(
    "lost", [Refused("PreconditionFailed"), Refused("", 412), Refused("ConditionalRequestConflict"), Refused("", 409)]
)
def test_each_lost_race_answer_means_someone_wrote_first(tmp_path: Path, lost: Exception) -> None:
    src = tmp_path / "copy"
    src.write_bytes(b"ledger")
    client = FakeS3()
    client.put_error = lost
    assert S3Ledger(client, "b", "k").upload(src, '"v1"') is False


def test_versioning_must_be_enabled(tmp_path: Path) -> None:
    S3Ledger(FakeS3("Enabled"), "b", "k").require_versioning()
    for status in (None, "Suspended"):
        with pytest.raises(LedgerStoreError) as err:
            S3Ledger(FakeS3(status), "b", "k").require_versioning()
        assert str(err.value) == "bucket b has no versioning; enable it (every ledger write is then a backup)"
    client = FakeS3()
    client.versioning_error = Refused("AccessDenied", 403)
    with pytest.raises(LedgerStoreError) as denied:
        S3Ledger(client, "b", "k").require_versioning()
    assert str(denied.value) == "cannot check versioning of bucket b: AccessDenied"
    assert denied.value.__cause__ is client.versioning_error


# --- open_ledger_at -----------------------------------------------------------------------------------------


def test_a_local_ledger_is_opened_in_place_and_must_exist_unless_created(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite3"
    with pytest.raises(LedgerStoreError) as err, open_ledger_at(str(path)):
        pass
    assert str(err.value) == f"no ledger at {path}; mint keys first, or set QBANK_LEDGER / --ledger"
    with open_ledger_at(str(path), create=True) as book:
        (key,) = book.mint(1)
    with open_ledger_at(str(path), readonly=True) as book:
        assert book.find(key).sold_on is None
        with pytest.raises(Exception, match="readonly"):
            book.sell(key, DAY, "a@example.org")


def test_s3_reading_needs_no_versioning_and_writing_does(tmp_path: Path) -> None:
    client = FakeS3(versioning=None)
    client.data, _keys = a_ledger(tmp_path)
    with open_ledger_at("s3://b/l.sqlite3", readonly=True, client=client) as book:
        assert len(book.licenses()) == 2
    with pytest.raises(LedgerStoreError, match="has no versioning"), open_ledger_at("s3://b/l.sqlite3", client=client):
        pass
    assert client.puts == []


@pytest.mark.parametrize("how", [{"readonly": True}, {}, {"readonly": True, "create": True}])
def test_no_object_is_refused_unless_created(how: dict[str, bool]) -> None:
    client = FakeS3()
    with pytest.raises(LedgerStoreError) as err, open_ledger_at("s3://b/k/l.sqlite3", client=client, **how):
        pass
    assert str(err.value) == "no ledger at s3://b/k/l.sqlite3; mint keys first (with --ledger there)"
    assert client.puts == []


def test_only_a_change_is_uploaded_once_and_counted(tmp_path: Path) -> None:
    client = FakeS3()
    client.data, keys = a_ledger(tmp_path)
    stats = StoreStats()
    with open_ledger_at("s3://b/l.sqlite3", client=client, stats=stats) as book:
        book.licenses()
        book.revoke(keys[1], "test")
        book.revoke(keys[1], "again")  # already revoked: no change, nothing recorded
    assert (stats.uploads, stats.retries, len(client.puts)) == (1, 0, 1)
    with open_ledger_at("s3://b/l.sqlite3", client=client, stats=stats) as book:
        book.sell(keys[0], DAY, "a@example.org")
        book.sell(keys[0], DAY, "a@example.org")
    with open_ledger_at("s3://b/l.sqlite3", client=client, stats=stats) as book:
        book.sell(keys[0], DAY, "a@example.org")  # the same sale again: nothing to upload
        book.revoke(keys[1], "third")
    assert (stats.uploads, stats.retries, len(client.puts)) == (2, 0, 2)


def test_a_lost_race_downloads_the_newer_ledger_replays_and_retries_with_backoff(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = FakeS3()
    client.data, keys = a_ledger(tmp_path, 3)
    others = iter(range(1, 3))
    newer: list[bytes] = []

    def someone_else() -> None:  # before each of our first two puts, another operator sells a key
        i = next(others, None)
        if i is None:
            return
        copy = tmp_path / f"other{i}.sqlite3"
        copy.write_bytes(client.data or b"")
        with open_ledger(copy) as theirs:
            theirs.sell(keys[i], DAY, f"other{i}@example.org")
        client.data, client.version = copy.read_bytes(), client.version + 1
        newer.append(client.data)

    client.before_put = someone_else
    waits: list[tuple[float, float]] = []
    monkeypatch.setattr("random.uniform", lambda a, b: waits.append((a, b)) or b)
    slept: list[float] = []
    stats = StoreStats()
    with open_ledger_at("s3://b/l.sqlite3", client=client, stats=stats, sleep=slept.append) as book:
        book.sell(keys[0], DAY, "mine@example.org")
    assert (stats.uploads, stats.retries) == (1, 2)
    assert waits == [(0, 0.05), (0, 0.1)] and slept == [0.05, 0.1]
    assert [p.get("IfMatch") for p in client.puts] == ['"v0"', '"v1"', '"v2"']
    final = tmp_path / "final.sqlite3"
    final.write_bytes(client.data or b"")
    with open_ledger(final) as book:
        assert [book.find(k).email for k in keys] == ["mine@example.org", "other1@example.org", "other2@example.org"]


def test_a_ledger_that_keeps_changing_is_given_up_after_the_bound(tmp_path: Path) -> None:
    client = FakeS3()
    client.data, keys = a_ledger(tmp_path)
    client.before_put = lambda: setattr(client, "version", client.version + 1)
    stats = StoreStats()
    with pytest.raises(LedgerStoreError) as err, open_ledger_at("s3://b/l.sqlite3", client=client, stats=stats,
                                                               sleep=lambda _s: None) as book:
        book.sell(keys[0], DAY, "a@example.org")
    assert str(err.value) == f"s3://b/l.sqlite3 kept changing: {MAX_ATTEMPTS} attempts; nothing uploaded"
    assert MAX_ATTEMPTS == 10 and len(client.puts) == 10 and (stats.uploads, stats.retries) == (0, 10)


def test_a_ledger_that_vanished_while_writing_uploads_nothing(tmp_path: Path) -> None:
    client = FakeS3()
    client.data, keys = a_ledger(tmp_path)

    def delete() -> None:
        client.data, client.version = None, client.version + 1

    client.before_put = delete
    with pytest.raises(LedgerStoreError) as err, open_ledger_at("s3://b/l.sqlite3", client=client,
                                                               sleep=lambda _s: None) as book:
        book.sell(keys[0], DAY, "a@example.org")
    assert str(err.value) == "s3://b/l.sqlite3 vanished while writing; nothing uploaded"
    assert len(client.puts) == 1


def test_a_replay_the_newer_ledger_refuses_is_a_ledger_error(tmp_path: Path) -> None:
    client = FakeS3()
    client.data, keys = a_ledger(tmp_path)

    def sold_meanwhile() -> None:
        copy = tmp_path / "other.sqlite3"
        copy.write_bytes(client.data or b"")
        with open_ledger(copy) as theirs:
            theirs.sell(keys[0], DAY, "other@example.org")
        client.data, client.version = copy.read_bytes(), client.version + 1
        client.before_put = None

    client.before_put = sold_meanwhile
    with pytest.raises(LedgerError, match="already sold"), open_ledger_at("s3://b/l.sqlite3", client=client,
                                                                         sleep=lambda _s: None) as book:
        book.sell(keys[0], DAY, "mine@example.org")
    assert len(client.puts) == 1


def test_the_private_copy_is_removed_after_the_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    client = FakeS3()
    client.data, _ = a_ledger(tmp_path)
    with open_ledger_at("s3://b/l.sqlite3", client=client, readonly=True) as book:
        (folder,) = (tmp_path / "tmp").iterdir()
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert stat.S_IMODE((folder / "ledger.sqlite3").stat().st_mode) == 0o600
        assert len(book.licenses()) == 2
    assert os.listdir(tmp_path / "tmp") == []
