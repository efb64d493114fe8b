"""The ledger: mint, sell, import, revoke, list, and what a build gets from it."""

from __future__ import annotations

import datetime as dt
import os
import stat
from pathlib import Path

import pytest

from qbank.paywall.keys import derive, format_key, generate_secret, parse_key
from qbank.paywall.ledger import LedgerError, add_months, open_ledger

from .conftest import qbank

TODAY = dt.date(2026, 11, 30)


@pytest.mark.parametrize(
    ("day", "end"),
    [
        (dt.date(2026, 1, 15), dt.date(2026, 7, 15)),
        (dt.date(2026, 8, 31), dt.date(2027, 2, 28)),
        (dt.date(2027, 8, 31), dt.date(2028, 2, 29)),
        (dt.date(2026, 12, 1), dt.date(2027, 6, 1)),
    ],
)
def test_six_months(day: dt.date, end: dt.date) -> None:
    assert add_months(day, 6) == end


def test_mint_stores_no_key_and_build_sees_states(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite3"
    with open_ledger(path) as book:
        keys = book.mint(4)
        assert len(set(keys)) == 4
        book.sell(keys[0], dt.date(2026, 10, 1), "a@example.com")
        book.sell(keys[1], dt.date(2026, 1, 1), "b@example.com")
        book.sell(keys[2], dt.date(2026, 11, 1), "c@example.com")
        book.revoke(keys[2], "refund")
        active, ended = book.for_build(TODAY)
        statuses = [lic.status(TODAY) for lic in book.licenses()]
    ids = [derive(parse_key(k)).identifier for k in keys]
    assert {a.identifier for a in active} == {ids[0], ids[3]}
    assert {(e.identifier, e.status) for e in ended} == {(ids[1], "expired"), (ids[2], "revoked")}
    assert {a.identifier: a.until for a in active} == {ids[0]: "2027-04-01", ids[3]: None}
    assert sorted(statuses) == ["active", "expired", "revoked", "unsold"]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    raw = path.read_bytes()
    for k in keys:  # neither the printed key nor its secret is stored
        assert k.encode() not in raw and parse_key(k) not in raw


SOLD = dt.date(2026, 1, 15)
EXPIRY = dt.date(2026, 7, 15)  # six calendar months after the sale: the first day the license opens nothing


@pytest.mark.parametrize(
    ("today", "state"),
    [
        (SOLD, "active"),
        (EXPIRY - dt.timedelta(days=1), "active"),  # its last day
        (EXPIRY, "expired"),  # the expiry day itself
        (EXPIRY + dt.timedelta(days=1), "expired"),
    ],
)
def test_status_and_for_build_agree_at_the_expiry_boundary(tmp_path: Path, today: dt.date, state: str) -> None:
    with open_ledger(tmp_path / "l.sqlite3") as book:
        (key,) = book.mint(1)
        lic = book.sell(key, SOLD, "a@example.com")
        active, ended = book.for_build(today)
    assert lic.expires_on == EXPIRY.isoformat()
    assert lic.status(today) == state
    built = {a.identifier: "active" for a in active} | {e.identifier: e.status for e in ended}
    assert built == {lic.identifier: state}
    if state == "expired":
        assert [(e.status, e.on) for e in ended] == [("expired", EXPIRY.isoformat())]
    else:
        assert [a.until for a in active] == [EXPIRY.isoformat()]


def test_unsold_and_revoked_states_agree_too(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "l.sqlite3") as book:
        _unsold, revoked = book.mint(2)
        book.sell(revoked, SOLD, "b@example.com")
        book.revoke(revoked, "refund")
        active, ended = book.for_build(SOLD)
        states = {lic.identifier: lic.status(SOLD) for lic in book.licenses()}
    built = {a.identifier: "unsold" if a.until is None else "active" for a in active}
    built |= {e.identifier: e.status for e in ended}
    assert built == states and sorted(states.values()) == ["revoked", "unsold"]
    assert [e.on for e in ended] == [None]


def test_sale_rules(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "l.sqlite3") as book:
        (key,) = book.mint(1)
        book.sell(key, TODAY, "a@example.com")
        book.sell(key, TODAY, "a@example.com")  # the same sale again: no change
        with pytest.raises(LedgerError, match="already sold"):
            book.sell(key, TODAY, "b@example.com")
        with pytest.raises(LedgerError, match="not in the ledger"):
            book.sell(format_key(generate_secret()), TODAY, "c@example.com")
        book.revoke(derive(parse_key(key)).identifier[:10])  # by identifier prefix, as `list` shows it
        assert book.find(key).revoked_at


def test_import_csv_reports_bad_rows_with_line_numbers(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "l.sqlite3") as book:
        a, b = book.mint(2)
        csv = tmp_path / "orders.csv"
        csv.write_text(
            "Order,License Key,Customer Email,Created At\n"
            f"1,{a},a@example.com,2026-11-02T10:00:00Z\n"
            f"2,{b[:-1]}{'0' if b[-1] != '0' else '1'},b@example.com,2026-11-03\n"
            f"3,{b},b@example.com,not-a-date\n"
        )
        sold, problems = book.import_csv(csv)
        assert sold == 1
        assert [(p.line, p.code) for p in problems] == [(3, "ledger-csv-row"), (4, "ledger-csv-row")]
        assert "checksum" in problems[0].message
        assert book.find(a).sold_on == "2026-11-02"


def test_cli_license_round_trip(tmp_path: Path) -> None:
    env = {"QBANK_LEDGER": str(tmp_path / "ledger.sqlite3")}
    mint = qbank("license", "mint", "--count", "2", env=env)
    assert mint.returncode == 0, mint.stderr
    keys = mint.stdout.split()
    assert len(keys) == 2 and "shown only now" in mint.stderr
    sell = qbank("license", "sell", keys[0], "--date", "2026-11-30", "--email", "x@example.com", env=env)
    assert sell.returncode == 0 and "until 2027-05-30" in sell.stdout
    assert (
        qbank("license", "sell", keys[0], "--date", "30/11/2026", "--email", "x@example.com", env=env).returncode == 2
    )
    bad = qbank(
        "license",
        "sell",
        keys[1][:-1] + "Z" if keys[1][-1] != "Z" else keys[1][:-1] + "Y",
        "--date",
        "2026-11-30",
        "--email",
        "y@example.com",
        env=env,
    )
    assert bad.returncode == 1 and "checksum" in bad.stderr
    assert qbank("license", "revoke", keys[1], "--reason", "test", env=env).returncode == 0
    listing = qbank("license", "list", env=env)
    assert listing.returncode == 0
    assert sorted(line.split()[1] for line in listing.stdout.splitlines()) == ["active", "revoked"]
    assert keys[0] not in listing.stdout
