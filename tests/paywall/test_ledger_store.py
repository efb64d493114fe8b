# ruff: noqa: F811  (the moto fixtures imported from tests/deploy/conftest.py are parameters below)
"""The ledger in a versioned bucket on moto's real S3 server: conditional writes, replay, versioning."""

from __future__ import annotations

import datetime as dt
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import boto3
import pytest

from qbank.paywall.ledger import LedgerError
from qbank.paywall.ledger_store import LedgerStoreError, StoreStats, mask_email, open_ledger_at

from ..deploy.conftest import _aws_env, s3_endpoint  # noqa: F401  (fixtures: moto server over HTTP)

DAY = dt.date(2026, 11, 2)


@pytest.fixture
def s3(s3_endpoint: str, _aws_env: None) -> Any:
    return boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1")


@pytest.fixture
def versioned(s3: Any, request: pytest.FixtureRequest) -> str:
    name = f"qbank-ledger-{os.getpid()}-{abs(hash(request.node.name)) % 10**8}"
    s3.create_bucket(Bucket=name)
    s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    return name


def test_create_sell_read_back_and_every_write_is_a_version(s3: Any, versioned: str, s3_endpoint: str) -> None:
    loc = f"s3://{versioned}/private/ledger.sqlite3"
    with pytest.raises(LedgerStoreError, match="no ledger"), open_ledger_at(loc, endpoint_url=s3_endpoint):
        pass
    with open_ledger_at(loc, create=True, endpoint_url=s3_endpoint) as book:
        keys = book.mint(3)
    with open_ledger_at(loc, endpoint_url=s3_endpoint) as book:
        book.sell(keys[0], DAY, "ann@example.org")
    with open_ledger_at(loc, endpoint_url=s3_endpoint, readonly=True) as book:
        lic = book.find(keys[0])
        assert (lic.sold_on, lic.expires_on) == ("2026-11-02", "2027-05-02")
        assert len(book.licenses()) == 3
    versions = s3.list_object_versions(Bucket=versioned, Prefix="private/")["Versions"]
    assert len(versions) == 2  # create + sale: the first is still there as a backup
    # a block that only reads uploads nothing
    with open_ledger_at(loc, endpoint_url=s3_endpoint) as book:
        book.licenses()
    assert len(s3.list_object_versions(Bucket=versioned, Prefix="private/")["Versions"]) == 2


def test_an_error_inside_the_block_uploads_nothing(s3: Any, versioned: str, s3_endpoint: str) -> None:
    loc = f"s3://{versioned}/ledger.sqlite3"
    with open_ledger_at(loc, create=True, endpoint_url=s3_endpoint) as book:
        keys = book.mint(1)
    with pytest.raises(RuntimeError), open_ledger_at(loc, endpoint_url=s3_endpoint) as book:
        book.sell(keys[0], DAY, "ann@example.org")
        raise RuntimeError("operator pressed Ctrl-C")
    with open_ledger_at(loc, endpoint_url=s3_endpoint, readonly=True) as book:
        assert book.find(keys[0]).sold_on is None


def test_a_bucket_without_versioning_is_refused(s3: Any, s3_endpoint: str) -> None:
    s3.create_bucket(Bucket="qbank-unversioned")
    loc = "s3://qbank-unversioned/l.sqlite3"
    with (
        pytest.raises(LedgerStoreError, match="versioning"),
        open_ledger_at(loc, create=True, endpoint_url=s3_endpoint) as book,
    ):
        book.mint(1)
    assert "Contents" not in s3.list_objects_v2(Bucket="qbank-unversioned")


def test_412_replays_the_operation_on_the_newer_ledger(s3: Any, versioned: str, s3_endpoint: str) -> None:
    loc = f"s3://{versioned}/ledger.sqlite3"
    with open_ledger_at(loc, create=True, endpoint_url=s3_endpoint) as book:
        keys = book.mint(2)
    stats = StoreStats()
    with open_ledger_at(loc, endpoint_url=s3_endpoint, stats=stats) as a:
        a.sell(keys[0], DAY, "ann@example.org")
        with open_ledger_at(loc, endpoint_url=s3_endpoint) as b:  # the other operator writes first
            b.sell(keys[1], DAY, "bob@example.org")
    assert stats.retries == 1 and stats.uploads == 1
    with open_ledger_at(loc, endpoint_url=s3_endpoint, readonly=True) as book:
        assert [book.find(k).sold_on for k in keys] == ["2026-11-02", "2026-11-02"]


def test_a_replay_the_newer_ledger_refuses_uploads_nothing(s3: Any, versioned: str, s3_endpoint: str) -> None:
    loc = f"s3://{versioned}/ledger.sqlite3"
    with open_ledger_at(loc, create=True, endpoint_url=s3_endpoint) as book:
        (key,) = book.mint(1)
    with pytest.raises(LedgerError, match="already sold"), open_ledger_at(loc, endpoint_url=s3_endpoint) as a:
        a.sell(key, DAY, "ann@example.org")
        with open_ledger_at(loc, endpoint_url=s3_endpoint) as b:
            b.sell(key, DAY, "bob@example.org")
    with open_ledger_at(loc, endpoint_url=s3_endpoint, readonly=True) as book:
        assert book.find(key).email == "bob@example.org"


def test_concurrent_operators_lose_no_sale(s3: Any, versioned: str, s3_endpoint: str) -> None:
    loc = f"s3://{versioned}/ledger.sqlite3"
    with open_ledger_at(loc, create=True, endpoint_url=s3_endpoint) as book:
        keys = book.mint(40)
    stats = [StoreStats(), StoreStats()]
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def operator(i: int) -> None:
        try:
            client = boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1")
            start.wait()
            for n in range(20):
                with open_ledger_at(loc, client=client, stats=stats[i]) as b:
                    b.sell(keys[i * 20 + n], DAY, f"buyer{i}-{n}@example.org")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=operator, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    with open_ledger_at(loc, endpoint_url=s3_endpoint, readonly=True) as book:
        assert sum(1 for lic in book.licenses() if lic.sold_on) == 40
    assert sum(s.uploads for s in stats) == 40
    assert sum(s.retries for s in stats) > 0, "the 412 path was never exercised"
    print(f"uploads={sum(s.uploads for s in stats)} retries={sum(s.retries for s in stats)}")


def test_cli_against_the_bucket_and_emails_masked(versioned: str, s3_endpoint: str, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "QBANK_LEDGER": f"s3://{versioned}/l.sqlite3",
        "QBANK_LEDGER_ENDPOINT_URL": s3_endpoint,
        "TMPDIR": str(tmp_path),
    }

    def qbank(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "qbank.cli", "license", *args], env=env, capture_output=True, text=True, timeout=120
        )

    mint = qbank("mint", "--count", "2")
    assert mint.returncode == 0, mint.stderr
    keys = mint.stdout.split()
    sell = qbank("sell", keys[0], "--date", "2026-11-30", "--email", "reader@example.org")
    assert sell.returncode == 0, sell.stderr
    listing = qbank("list")
    assert listing.returncode == 0, listing.stderr
    for out in (sell.stdout + sell.stderr, listing.stdout + listing.stderr):
        assert "reader@example.org" not in out and "r***@e***.org" in out
    assert list(tmp_path.iterdir()) == []  # the private copies were removed


def test_private_copy_is_0600_while_open(
    versioned: str, s3_endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    with open_ledger_at(f"s3://{versioned}/l.sqlite3", create=True, endpoint_url=s3_endpoint) as book:
        book.mint(1)
        (folder,) = tmp_path.iterdir()
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert stat.S_IMODE((folder / "ledger.sqlite3").stat().st_mode) == 0o600
    assert list(tmp_path.iterdir()) == []


def test_mask_email() -> None:
    assert mask_email("ann@example.org") == "a***@e***.org"
    assert mask_email(None) == "-"
    assert "nodomain" not in mask_email("nodomain")


def test_a_shop_import_is_replayed_after_a_412(s3: Any, versioned: str, s3_endpoint: str, tmp_path: Path) -> None:
    from qbank.paywall.shop import sendowl

    loc = f"s3://{versioned}/ledger.sqlite3"
    with open_ledger_at(loc, create=True, endpoint_url=s3_endpoint) as book:
        keys = book.mint(2)
    orders = tmp_path / "orders.csv"
    orders.write_text(f"Order ID,Date,Buyer Email,License Key,State\n7,2026-11-02,ann@example.org,{keys[0]},refunded\n")
    rows, problems = sendowl.parse_orders(orders, "orders.csv")
    assert not problems
    stats = StoreStats()
    with open_ledger_at(loc, endpoint_url=s3_endpoint, stats=stats) as a:
        assert a.apply_orders("sendowl", rows)[1] == []
        with open_ledger_at(loc, endpoint_url=s3_endpoint) as b:
            b.sell(keys[1], DAY, "bob@example.org")
    assert stats.retries == 1
    with open_ledger_at(loc, endpoint_url=s3_endpoint, readonly=True) as book:
        assert book.find(keys[0]).reason == "refund (sendowl order 7)"
        assert book.find(keys[1]).sold_on == "2026-11-02"


def test_two_operator_processes_selling_at_once_keep_every_sale(versioned: str, s3_endpoint: str) -> None:
    env = {**os.environ, "QBANK_LEDGER": f"s3://{versioned}/l.sqlite3", "QBANK_LEDGER_ENDPOINT_URL": s3_endpoint}
    mint = subprocess.run(
        [sys.executable, "-m", "qbank.cli", "license", "mint", "--count", "10"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert mint.returncode == 0, mint.stderr
    keys = mint.stdout.split()
    script = (
        "import subprocess, sys\n"
        "for k in sys.argv[2:]:\n"
        "    p = subprocess.run([sys.executable, '-m', 'qbank.cli', 'license', 'sell', k, '--date', '2026-11-02',"
        " '--email', sys.argv[1] + '@example.org'], capture_output=True, text=True)\n"
        "    sys.stderr.write(p.stderr)\n"
        "    assert p.returncode == 0, p.stderr\n"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, f"op{i}", *keys[i * 5 : i * 5 + 5]],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    outs = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    with open_ledger_at(env["QBANK_LEDGER"], endpoint_url=s3_endpoint, readonly=True) as book:
        assert sorted(lic.email or "" for lic in book.licenses()) == sorted(
            ["op0@example.org"] * 5 + ["op1@example.org"] * 5
        )
