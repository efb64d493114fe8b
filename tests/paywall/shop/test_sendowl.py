"""SendOwl: the key list we upload, the order export we read back; every bad row positioned, all or nothing."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from qbank.paywall.shop import sendowl

HEADER = "Order ID,Date,Buyer Email,License Key,State\r\n"


def qbank(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "qbank.cli", "license", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def pool(tmp_path: Path) -> tuple[dict[str, str], list[str], Path]:
    ledger = tmp_path / "ledger.sqlite3"
    env = {"QBANK_LEDGER": str(ledger)}
    out = tmp_path / "keys.txt"
    proc = qbank("export", "--shop", "sendowl", "--count", "4", "--out", str(out), env=env)
    assert proc.returncode == 0, proc.stderr
    assert oct(out.stat().st_mode & 0o777) == "0o600"
    keys = sendowl.read_key_list(out)
    assert len(keys) == 4 and out.read_text().splitlines() == keys
    return env, keys, ledger


def state(ledger: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(ledger) as c:
        return (
            c.execute(
                "SELECT id, sold_on, email, expires_on, revoked_at IS NOT NULL, reason FROM licenses ORDER BY id"
            ).fetchall()
            + c.execute("SELECT * FROM orders ORDER BY order_id").fetchall()
        )


def test_export_gives_fresh_keys_every_time(pool: tuple[dict[str, str], list[str], Path], tmp_path: Path) -> None:
    env, keys, _ = pool
    out = tmp_path / "more.txt"
    assert qbank("export", "--count", "3", "--out", str(out), env=env).returncode == 0
    assert not set(sendowl.read_key_list(out)) & set(keys)


def test_golden_import_idempotent_reordered_and_refund(
    pool: tuple[dict[str, str], list[str], Path], tmp_path: Path
) -> None:
    env, k, ledger = pool
    lines = [
        f"1001,2026-11-02 10:00:00,ann@example.org,{k[0]},complete\r\n",
        f"1002,2026-11-03,bob@example.org,{k[1]},complete\r\n",
        f"1003,2026-11-04,cat@example.org,{k[2]},initial\r\n",
    ]
    orders = tmp_path / "orders.csv"
    orders.write_bytes(b"\xef\xbb\xbf" + (HEADER + "".join(lines)).encode())
    first = qbank("import", str(orders), "--shop", "sendowl", env=env)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "2 sales and 0 revocations" in first.stdout and "ann@example.org" not in first.stdout
    after = state(ledger)
    sold = {r[1]: r[3] for r in after[:4] if r[1]}
    assert sold == {"2026-11-02": "2027-05-02", "2026-11-03": "2027-05-03"}
    again = qbank("import", str(orders), "--shop", "sendowl", env=env)
    assert again.returncode == 0 and "0 sales and 0 revocations" in again.stdout
    assert state(ledger) == after
    orders.write_text(HEADER + "".join(reversed(lines)))
    assert qbank("import", str(orders), "--shop", "sendowl", env=env).returncode == 0
    assert state(ledger) == after
    orders.write_text(HEADER + lines[0] + lines[1].replace("complete", "refunded"))
    refund = qbank("import", str(orders), "--shop", "sendowl", env=env)
    assert refund.returncode == 0 and "1 revocations" in refund.stdout
    reasons = [r[5] for r in state(ledger)[:4] if r[4]]
    assert reasons == ["refunded (sendowl order 1002)"] or reasons == ["refund (sendowl order 1002)"]


@pytest.mark.parametrize(
    ("row", "code", "col"),
    [
        ("2001,02/11/2026,x@example.org,{k2},complete", "shop-date", 2),
        ("2001,2026-11-02,x@example.org,{bad},complete", "shop-key", 4),
        ("2001,2026-11-02,x@example.org,{stranger},complete", "shop-unknown-key", 4),
        ("1001,2026-11-09,ann@example.org,{k3},complete", "shop-order-conflict", 2),
        ("2009,2026-11-02,zed@example.org,{k0},complete", "shop-key-resold", 4),
        ('=HYPERLINK("http://x"),2026-11-02,x@example.org,{k2},complete', "shop-order-id", 1),
        ("2001,2026-11-02,=cmd|x@example.org,{k2},complete", "shop-email", 3),
        ("2001,2026-11-02,x@example.org,{k2},shipped", "shop-state", 5),
        ("2001,,x@example.org,{k2},complete", "shop-missing", 2),
        ('2001,2026-11-02,x@example.org,{k2},complete,"' + "A" * 5000 + '"', "shop-cell-size", 6),
    ],
)
def test_each_bad_row_is_positioned_and_changes_nothing(
    pool: tuple[dict[str, str], list[str], Path], tmp_path: Path, row: str, code: str, col: int
) -> None:
    from qbank.paywall.keys import format_key, generate_secret

    env, k, ledger = pool
    bad = k[2][:-1] + ("0" if k[2][-1] != "0" else "1")
    good = f"1001,2026-11-02,ann@example.org,{k[0]},complete\n"
    orders = tmp_path / "orders.csv"
    orders.write_text(
        HEADER
        + good
        + f"1500,2026-11-05,dan@example.org,{k[1]},complete\n"
        + row.format(k0=k[0], k2=k[2], k3=k[3], bad=bad, stranger=format_key(generate_secret()))
        + "\n"
    )
    before = state(ledger)
    proc = qbank("import", str(orders), "--shop", "sendowl", env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"{orders}:4:{col}: error:" in proc.stdout + proc.stderr and f"[{code}]" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "example.org" not in proc.stdout + proc.stderr
    assert state(ledger) == before


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (HEADER.encode() + b"1,2026-11-02,a@example.org,\x00,complete\n", "shop-nul"),
        (HEADER.encode() + b"1,2026-11-02,\xff@example.org,QB,complete\n", "shop-encoding"),
        (b"Order ID,Date,Email,State\n1,2026-11-02,a@example.org,complete\n", "shop-columns"),
        (HEADER.encode() + b'1,"2026-11-02' + b"x" * 200000 + b'",a@example.org,QB,complete\n', "shop-c"),
    ],
)
def test_hostile_files_are_clear_problems(
    pool: tuple[dict[str, str], list[str], Path], tmp_path: Path, data: bytes, code: str
) -> None:
    env, _, ledger = pool
    orders = tmp_path / "orders.csv"
    orders.write_bytes(data)
    before = state(ledger)
    proc = qbank("import", str(orders), "--shop", "sendowl", env=env)
    assert proc.returncode == 1 and f"[{code}" in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert state(ledger) == before
