"""What the S3 ledger store records and replays (``RecordingLedger``, ``replay``), its statistics record, and a
read-only S3 ledger, on in-memory SQLite and the S3 stand-in of test_ledger_store_parts.py."""

from __future__ import annotations

import dataclasses
import datetime as dt
import io
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import IncompleteReadError
from botocore.response import StreamingBody

from qbank.paywall.keys import derive, format_key, parse_key
from qbank.paywall.ledger import SCHEMA, Ledger, LedgerError
from qbank.paywall.ledger_store import (
    LedgerStoreError,
    RecordingLedger,
    S3Ledger,
    StoreStats,
    open_ledger_at,
    parse_s3,
    replay,
)
from qbank.paywall.shop.model import OrderRow

from .test_ledger_store_parts import FakeS3, a_ledger

NOW = dt.datetime(2026, 11, 2, 9, 30, tzinfo=dt.UTC)
DAY = dt.date(2026, 11, 2)
SECRETS = [bytes(range(i, i + 16)) for i in (0, 40)]


def _conn() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.executescript(SCHEMA)
    return conn


@pytest.fixture
def book() -> Iterator[RecordingLedger]:
    conn = _conn()
    yield RecordingLedger(conn)
    conn.close()


@pytest.fixture
def plain() -> Iterator[Ledger]:
    conn = _conn()
    yield Ledger(conn)
    conn.close()


def test_store_stats_is_a_record() -> None:
    assert StoreStats() == StoreStats(0, 0) == StoreStats(uploads=0, retries=0)
    assert StoreStats(uploads=2, retries=1) != StoreStats(uploads=1, retries=2)
    assert [f.name for f in dataclasses.fields(StoreStats)] == ["uploads", "retries"]
    assert repr(StoreStats(3, 4)) == "StoreStats(uploads=3, retries=4)"


def test_mint_with_given_secrets_mints_those_keys_and_records_them(book: RecordingLedger, plain: Ledger) -> None:
    keys = book.mint(2, NOW, list(SECRETS))
    assert keys == plain.mint(2, NOW, list(SECRETS))
    assert [derive(parse_key(k)).identifier for k in keys] == [derive(s).identifier for s in SECRETS]
    assert book.ops == [("mint", (2,), {"now": NOW, "secrets": SECRETS})]


def test_mint_records_the_secrets_and_time_it_chose(book: RecordingLedger, plain: Ledger) -> None:
    before = dt.datetime.now(dt.UTC).replace(microsecond=0)
    keys = book.mint(3)
    after = dt.datetime.now(dt.UTC)
    ((name, args, kwargs),) = book.ops
    assert (name, args) == ("mint", (3,))
    chosen, stamp = kwargs["secrets"], kwargs["now"]
    assert [derive(parse_key(k)).identifier for k in keys] == [derive(s).identifier for s in chosen]
    assert len(chosen) == 3 and all(isinstance(s, bytes) and len(s) == 16 for s in chosen)
    assert stamp.tzinfo is dt.UTC and before <= stamp <= after
    replay(plain, book.ops)  # the same keys, minted at the same second, on another ledger
    assert [(lic.identifier, lic.minted_at) for lic in plain.licenses()] == [
        (lic.identifier, lic.minted_at) for lic in book.licenses()
    ]


def test_mint_at_a_given_time_records_that_time(book: RecordingLedger) -> None:
    book.mint(1, NOW)
    assert book.ops[0][2]["now"] is NOW
    assert book.licenses()[0].minted_at == "2026-11-02T09:30:00+00:00"


def test_revoke_records_the_time_given(book: RecordingLedger, plain: Ledger) -> None:
    (key,) = book.mint(1, NOW, SECRETS[:1])
    later = NOW + dt.timedelta(days=3)
    lic = book.revoke(key, "refund", later)
    assert lic.revoked_at == "2026-11-05T09:30:00+00:00" and lic.reason == "refund"
    assert book.ops[1:] == [("revoke", (key, "refund"), {"now": later})]
    replay(plain, book.ops)
    assert plain.find(key).revoked_at == "2026-11-05T09:30:00+00:00"


def test_revoke_without_a_time_records_the_time_it_used(book: RecordingLedger) -> None:
    (key,) = book.mint(1, NOW, SECRETS[:1])
    before = dt.datetime.now(dt.UTC).replace(microsecond=0)
    lic = book.revoke(key)
    after = dt.datetime.now(dt.UTC)
    ((name, args, kwargs),) = book.ops[1:]
    assert (name, args) == ("revoke", (key, ""))
    stamp = kwargs["now"]
    assert stamp.tzinfo is dt.UTC and before <= stamp <= after
    assert lic.revoked_at == stamp.isoformat(timespec="seconds")


def test_a_sale_is_recorded_once(book: RecordingLedger) -> None:
    (key,) = book.mint(1, NOW, SECRETS[:1])
    book.sell(key, DAY, "a@example.org")
    book.sell(key, DAY, "a@example.org")  # the same sale: no change
    assert book.ops[1:] == [("sell", (key, DAY, "a@example.org"), {})]


def _row(key: str, order: str = "o-1", email: str = "a@example.org", line: int = 2) -> OrderRow:
    cols = (("order", 1), ("date", 2), ("email", 3), ("key", 4), ("status", 5))
    return OrderRow("orders.csv", line, order, DAY, email, key, "sale", cols)


def test_a_clean_import_is_recorded_and_replays(book: RecordingLedger, plain: Ledger) -> None:
    keys = book.mint(2, NOW, list(SECRETS))
    rows = [_row(keys[0]), _row(keys[1], "o-2", "b@example.org", 3)]
    _counts, problems = book.apply_orders("sendowl", rows)
    assert problems == []
    assert book.ops[1:] == [("apply_orders_strict", ("sendowl", rows), {})]
    replay(plain, book.ops)
    assert [(lic.sold_on, lic.email) for lic in plain.licenses()] == [
        ("2026-11-02", "a@example.org"),
        ("2026-11-02", "b@example.org"),
    ]
    book.apply_orders("sendowl", rows)  # imported again: nothing changes, nothing recorded
    assert len(book.ops) == 2


def test_an_import_with_problems_is_not_recorded(book: RecordingLedger) -> None:
    book.mint(1, NOW, SECRETS[:1])
    unknown = format_key(bytes(16))  # a well-formed key this ledger never minted
    _counts, problems = book.apply_orders("sendowl", [_row(unknown)])
    assert problems and len(book.ops) == 1


def test_an_import_the_newer_ledger_refuses_says_why(book: RecordingLedger, plain: Ledger) -> None:
    keys = book.mint(1, NOW, SECRETS[:1])
    book.apply_orders("sendowl", [_row(keys[0])])
    plain.mint(1, NOW, SECRETS[:1])
    plain.sell(keys[0], dt.date(2026, 10, 1), "other@example.org")  # sold meanwhile, elsewhere
    with pytest.raises(LedgerError) as err:
        replay(plain, book.ops[1:])  # the import alone: the newer ledger has the key already
    assert str(err.value) == (
        "the ledger changed meanwhile and now refuses this import: "
        "orders.csv:2:4: error: this key was already sold on 2026-10-01 [shop-key-resold]"
    )
    assert type(err.value) is LedgerError


def test_replay_applies_every_kind_in_order(book: RecordingLedger, plain: Ledger) -> None:
    keys = book.mint(2, NOW, list(SECRETS))
    book.sell(keys[0], DAY, "a@example.org")
    book.revoke(keys[0], "chargeback", NOW)
    book.apply_orders("sendowl", [_row(keys[1], "o-9", "c@example.org")])
    assert [op[0] for op in book.ops] == ["mint", "sell", "revoke", "apply_orders_strict"]
    replay(plain, book.ops)
    assert plain.licenses() == book.licenses()


def test_a_read_only_s3_ledger_refuses_writes(tmp_path: Path) -> None:
    client = FakeS3()
    client.data, keys = a_ledger(tmp_path)
    with open_ledger_at("s3://b/l.sqlite3", readonly=True, client=client) as ro:
        assert not isinstance(ro, RecordingLedger)
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            ro.sell(keys[0], DAY, "a@example.org")
    assert client.puts == []


@pytest.mark.parametrize("location", ["s3a://bucket/key", "sftp://bucket/key", "s4://bucket/key"])
def test_parse_s3_refuses_schemes_that_sort_after_s3(location: str) -> None:
    with pytest.raises(LedgerStoreError) as err:
        parse_s3(location)
    assert str(err.value) == f"{location!r} is not s3://bucket/key (the ledger is one object)"


def test_a_download_cut_short_is_an_error_not_a_shorter_ledger(tmp_path: Path) -> None:
    """botocore checks the length it was promised once a read of a positive size comes back empty."""
    data = bytes(range(256)) * 4

    class Cut(FakeS3):
        def get_object(self, Bucket: str, Key: str) -> dict[str, Any]:
            return {"Body": StreamingBody(io.BytesIO(data[:-5]), len(data)), "ETag": '"v1"'}

    with pytest.raises(IncompleteReadError):
        S3Ledger(Cut(), "b", "k").download(tmp_path / "copy")
    whole = FakeS3()
    whole.get_object = lambda Bucket, Key: {"Body": StreamingBody(io.BytesIO(data), len(data)), "ETag": '"v2"'}  # type: ignore[method-assign]
    assert S3Ledger(whole, "b", "k").download(tmp_path / "copy") == '"v2"'
    assert (tmp_path / "copy").read_bytes() == data


def test_a_no_op_is_not_recorded_past_the_counts_cpython_caches(book: RecordingLedger) -> None:
    """``total_changes`` past 256 is a new int object each time it is read: the test is by value."""
    keys = book.mint(300, NOW)
    assert book.conn.total_changes == 300
    book.sell(keys[0], DAY, "a@example.org")
    book.sell(keys[0], DAY, "a@example.org")  # the same sale again: no change
    book.revoke(keys[1], "x", NOW)
    book.revoke(keys[1], "again", NOW)  # already revoked: no change
    assert [op[0] for op in book.ops] == ["mint", "sell", "revoke"]


def test_an_import_refused_for_several_lines_names_the_first(book: RecordingLedger, plain: Ledger) -> None:
    keys = book.mint(2, NOW, list(SECRETS))
    book.apply_orders("sendowl", [_row(keys[0]), _row(keys[1], "o-2", "b@example.org", 3)])
    plain.mint(2, NOW, list(SECRETS))
    plain.sell(keys[0], dt.date(2026, 10, 1), "x@example.org")
    plain.sell(keys[1], dt.date(2026, 10, 2), "y@example.org")
    with pytest.raises(LedgerError) as err:
        replay(plain, book.ops[1:])
    assert str(err.value) == (
        "the ledger changed meanwhile and now refuses this import: "
        "orders.csv:2:4: error: this key was already sold on 2026-10-01 [shop-key-resold]"
    )
