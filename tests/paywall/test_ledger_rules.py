"""The ledger's smaller rules, each at its edge: where it lives, how a key or an identifier is found, what
a bad import says, a read-only ledger, and a shop's order lines (``apply_orders``) called directly."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest

from qbank.paywall.keys import derive, format_key, generate_secret, parse_key
from qbank.paywall.ledger import Ledger, LedgerError, License, add_months, default_ledger_path, open_ledger
from qbank.paywall.shop.model import CHARGEBACK, IGNORED, REFUND, SALE, OrderRow

DAY = dt.date(2026, 11, 2)
COLS = (("order_id", 1), ("date", 2), ("email", 3), ("key", 4), ("status", 5))


def order(
    line: int, order_id: str, key: str, status: str = SALE, day: dt.date = DAY, email: str = "a@example.org"
) -> OrderRow:
    return OrderRow("orders.csv", line, order_id, day, email, key, status, COLS)


def ident(key: str) -> str:
    return derive(parse_key(key)).identifier


def rows(book: Ledger) -> list[tuple[object, ...]]:
    return book.conn.execute(
        "SELECT id, sold_on, email, expires_on, revoked_at IS NOT NULL, reason FROM licenses ORDER BY id"
    ).fetchall() + book.conn.execute("SELECT * FROM orders ORDER BY order_id, id").fetchall()


# --- where the ledger lives ---------------------------------------------------------------------------


def test_the_default_place_follows_qbank_ledger_then_xdg_then_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("QBANK_LEDGER", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    assert default_ledger_path() == tmp_path / "home" / ".local" / "share" / "qbank" / "ledger.sqlite3"
    monkeypatch.setenv("XDG_DATA_HOME", "")  # empty counts as unset
    assert default_ledger_path() == tmp_path / "home" / ".local" / "share" / "qbank" / "ledger.sqlite3"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_ledger_path() == tmp_path / "data" / "qbank" / "ledger.sqlite3"
    monkeypatch.setenv("QBANK_LEDGER", "~/books/l.sqlite3")
    assert default_ledger_path() == tmp_path / "home" / "books" / "l.sqlite3"


# --- minting and finding ----------------------------------------------------------------------------------


def test_mint_takes_exactly_the_secrets_asked_for_past_small_counts(tmp_path: Path) -> None:
    secrets = [generate_secret() for _ in range(300)]  # 300: a count CPython does not cache as one object
    with open_ledger(tmp_path / "l.sqlite3") as book:
        keys = book.mint(300, secrets=secrets)
        assert keys == [format_key(s) for s in secrets]
        assert len(book.licenses()) == 300
        with pytest.raises(ValueError, match=r"^2 keys asked, 1 secrets given$"):
            book.mint(2, secrets=secrets[:1])
        with pytest.raises(ValueError, match=r"^1 keys asked, 2 secrets given$"):
            book.mint(1, secrets=[generate_secret(), generate_secret()])
        assert len(book.licenses()) == 300


def test_an_identifier_prefix_needs_eight_hex_digits_and_one_match(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "l.sqlite3") as book:
        (key,) = book.mint(1)
        full = ident(key)
        assert book.find(full[:8]).identifier == full
        assert book.find(" " + full[:8].upper() + " ").identifier == full
        with pytest.raises(LedgerError, match="nor an identifier"):
            book.find(full[:7])
        with pytest.raises(LedgerError, match="nor an identifier"):
            book.find(full[:7] + "g")
        nobody = "ffffffff" if not full.startswith("ffffffff") else "00000000"
        with pytest.raises(LedgerError, match=rf"^0 licenses have an identifier starting '{nobody}'$"):
            book.find(nobody)


def test_a_prefix_two_identifiers_share_is_refused(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "l.sqlite3") as book:
        for ident_ in ("abcdef00" + "1" * 24, "abcdef00" + "2" * 24):  # written by hand: a shared 8-digit prefix
            book.conn.execute("INSERT INTO licenses (id, kek, minted_at) VALUES (?, ?, ?)", (ident_, b"k" * 32, "t"))
        with pytest.raises(LedgerError, match=r"^2 licenses have an identifier starting 'abcdef00'$"):
            book.find("abcdef00")
        assert book.find("abcdef002").identifier == "abcdef00" + "2" * 24


def test_a_sale_is_the_same_sale_only_with_the_same_date_and_email(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "l.sqlite3") as book:
        (key,) = book.mint(1)
        book.sell(key, DAY, "b@example.org")
        for day, email in ((DAY - dt.timedelta(days=1), "b@example.org"), (DAY, "a@example.org"),
                           (DAY + dt.timedelta(days=1), "b@example.org"), (DAY, "c@example.org")):
            with pytest.raises(LedgerError, match=r"^this license was already sold on 2026-11-02 to b@example\.org$"):
                book.sell(key, day, email)
        lic = book.sell(key, DAY, "b@example.org")
    assert (lic.sold_on, lic.email, lic.expires_on) == ("2026-11-02", "b@example.org", "2027-05-02")


def test_june_plus_six_months_is_december_of_the_same_year() -> None:
    assert add_months(dt.date(2026, 6, 30), 6) == dt.date(2026, 12, 30)
    assert add_months(dt.date(2026, 7, 31), 6) == dt.date(2027, 1, 31)


def test_a_license_row_is_immutable_and_hashable(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "l.sqlite3") as book:
        (key,) = book.mint(1)
        lic = book.find(key)
    with pytest.raises(FrozenInstanceError):
        lic.email = "x@example.org"  # type: ignore[misc]
    assert {lic, book_copy(lic)} == {lic}


def book_copy(lic: License) -> License:
    return License(**{f: getattr(lic, f) for f in lic.__dataclass_fields__})


# --- import_csv -------------------------------------------------------------------------------------------


def test_an_import_without_its_columns_records_nothing_and_says_which(tmp_path: Path) -> None:
    csv = tmp_path / "orders.csv"
    csv.write_text("Order,License Key,Note\n1,QB-X,hello\n")
    with open_ledger(tmp_path / "l.sqlite3") as book:
        sold, problems = book.import_csv(csv)
    assert sold == 0
    assert [(p.line, p.col, p.code, p.message) for p in problems] == [
        (1, 1, "ledger-csv-columns", "the CSV has no column for date, email")
    ]


def test_a_bad_import_row_is_placed_at_its_line_and_first_column(tmp_path: Path) -> None:
    csv = tmp_path / "orders.csv"
    with open_ledger(tmp_path / "l.sqlite3") as book:
        (key,) = book.mint(1)
        csv.write_text(f"email,key,date\na@example.org,{key},2026-11-02\nb@example.org,{key},02/11/2026\n")
        sold, problems = book.import_csv(csv)
    assert sold == 1
    assert [(p.line, p.col, p.code) for p in problems] == [(3, 1, "ledger-csv-row")]


def test_an_import_records_each_row_with_its_own_email_trimmed(tmp_path: Path) -> None:
    csv = tmp_path / "orders.csv"
    with open_ledger(tmp_path / "l.sqlite3") as book:
        k1, k2 = book.mint(2)
        csv.write_text(f"Customer Email,License Key,Sold On\n ann@example.org ,{k1},2026-11-02\n,{k2},2026-11-03\n")
        sold, problems = book.import_csv(csv)
        assert (sold, problems) == (2, [])
        assert sorted((lic.sold_on, lic.email) for lic in book.licenses()) == [
            ("2026-11-02", "ann@example.org"),
            ("2026-11-03", ""),  # an empty cell is an empty email, not a failed row
        ]


# --- a read-only ledger -----------------------------------------------------------------------------------


def test_a_new_ledger_gets_its_folders(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "l.sqlite3"
    with open_ledger(path) as book:
        book.mint(1)
    with open_ledger(path) as book:  # and an existing folder is fine
        assert len(book.licenses()) == 1


def test_a_ledger_opened_without_create_reads_and_refuses_writes(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite3"
    with open_ledger(path) as book:
        (key,) = book.mint(1)
    with open_ledger(path, create=False) as book:
        assert [lic.identifier for lic in book.licenses()] == [ident(key)]
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            book.mint(1)
    with pytest.raises(sqlite3.OperationalError), open_ledger(tmp_path / "none.sqlite3", create=False):
        pass
    assert not (tmp_path / "none.sqlite3").exists()


# --- apply_orders -----------------------------------------------------------------------------------------


def test_a_key_in_two_orders_is_refused_whichever_order_id_sorts_first(tmp_path: Path) -> None:
    for first, second in (("2001", "2002"), ("2002", "2001")):
        with open_ledger(tmp_path / f"{first}.sqlite3") as book:
            (key,) = book.mint(1)
            before = rows(book)
            counts, problems = book.apply_orders("sendowl", [order(2, first, key), order(3, second, key)])
            assert counts == {"sold": 0, "revoked": 0}
            assert [(p.line, p.col, p.code, p.message) for p in problems] == [
                (3, 4, "shop-key-resold", f"this key is also in order {first} (line 2)")
            ]
            assert rows(book) == before


def test_every_bad_line_is_reported_not_only_the_first(tmp_path: Path) -> None:
    # a parser's values: a status read from JSON is equal to SALE, not SALE itself; each row its own date
    (sale,) = json.loads('["sale"]')
    with open_ledger(tmp_path / "l.sqlite3") as book:
        k1, k2, k3, k4, k5, k6 = book.mint(6)
        done = book.apply_orders("sendowl", [order(2, "1001", k1), order(3, "1002", k2), order(4, "1001", k6)])
        assert done == ({"sold": 3, "revoked": 0}, [])
        book.revoke(k4, "fraud")
        before = rows(book)
        counts, problems = book.apply_orders(
            "sendowl",
            [
                order(2, "1003", k3, day=dt.date(2026, 11, 2), email="c@example.org"),
                order(3, "1003", k3, day=dt.date(2026, 11, 2), email="d@example.org"),  # one order, two emails
                order(4, "1000", k1),  # k1 was sold in order 1001 (whose id sorts after this one)
                order(5, "1005", format_key(generate_secret())),  # a key this ledger never minted
                order(6, "1002", k2, day=DAY + dt.timedelta(days=1)),  # order 1002 had another date
                order(7, "1006", k5),
                order(8, "1007", k5),  # one key, two orders
                order(9, "1008", k3, day=DAY + dt.timedelta(days=1)),
                order(10, "1008", k3),  # one order, two dates: the later line has the earlier one
                order(11, "1004", k4, sale),  # k4 was revoked
                order(12, "1010", format_key(generate_secret())),
                order(13, "1009", k6),  # k6 was sold in order 1001 (whose id sorts before this one)
            ],
        )
        assert counts == {"sold": 0, "revoked": 0}
        assert [(p.line, p.col, p.code, p.message) for p in problems] == [
            (3, 3, "shop-order-conflict", "order 1003 has another email on line 2"),
            (4, 4, "shop-key-resold", "this key was sold in another order already"),
            (5, 4, "shop-unknown-key", "this key is not in the ledger"),
            (6, 2, "shop-order-conflict", "order 1002 was imported before with another date or email"),
            (8, 4, "shop-key-resold", "this key is also in order 1006 (line 7)"),
            (9, 4, "shop-key-resold", "this key is also in order 1003 (line 2)"),
            (10, 2, "shop-order-conflict", "order 1008 has another date on line 9"),
            (11, 4, "shop-revoked", "this key was revoked; it cannot be sold"),
            (12, 4, "shop-unknown-key", "this key is not in the ledger"),
            (13, 4, "shop-key-resold", "this key was sold in another order already"),
        ]
        assert rows(book) == before


def test_an_order_imported_again_with_an_earlier_date_or_an_email_sorting_first_conflicts(tmp_path: Path) -> None:
    """Another date or email than the first import's, on whichever side it sorts: not only a later one."""
    with open_ledger(tmp_path / "l.sqlite3") as book:
        k1, k2 = book.mint(2)
        first = [order(2, "1001", k1, email="m@example.org"), order(3, "1002", k2, email="m@example.org")]
        assert book.apply_orders("sendowl", first) == ({"sold": 2, "revoked": 0}, [])
        before = rows(book)
        counts, problems = book.apply_orders(
            "sendowl",
            [
                order(2, "1001", k1, day=DAY - dt.timedelta(days=1), email="m@example.org"),  # an earlier date
                order(3, "1002", k2, email="a@example.org"),  # an email that sorts before the first one
            ],
        )
        assert counts == {"sold": 0, "revoked": 0}
        assert [(p.line, p.code, p.message) for p in problems] == [
            (2, "shop-order-conflict", "order 1001 was imported before with another date or email"),
            (3, "shop-order-conflict", "order 1002 was imported before with another date or email"),
        ]
        assert rows(book) == before


def test_a_revoked_key_may_still_be_refunded_and_a_refund_line_wins_over_its_sale_line(tmp_path: Path) -> None:
    # the two lines of order 2002 carry equal ids that are not one object, as a parser gives them
    first, second = json.loads('["2002", "2002"]')
    assert first == second and first is not second
    with open_ledger(tmp_path / "l.sqlite3") as book:
        revoked, k2 = book.mint(2)
        book.revoke(revoked, "fraud")
        counts, problems = book.apply_orders(
            "sendowl", [order(2, "1001", revoked, REFUND), order(3, first, k2, REFUND), order(4, second, k2, SALE)]
        )
        assert (counts, problems) == ({"sold": 2, "revoked": 1}, [])
        assert book.find(revoked).reason == "fraud"
        assert book.find(k2).reason == "refund (sendowl order 2002)"
        assert sorted(book.conn.execute("SELECT order_id, state FROM orders").fetchall()) == [
            ("1001", REFUND), ("2002", REFUND)
        ]


def test_a_sale_recorded_by_hand_first_is_the_same_sale_only_with_the_same_date_and_email(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "l.sqlite3") as book:
        same, earlier, later = book.mint(3)
        book.sell(same, DAY, "a@example.org")
        book.sell(earlier, DAY - dt.timedelta(days=1), "a@example.org")  # the ledger's sale sorts before the row's
        book.sell(later, DAY + dt.timedelta(days=1), "a@example.org")  # and after it
        before = rows(book)
        counts, problems = book.apply_orders(
            "sendowl", [order(2, "1", earlier), order(3, "2", later)]
        )
        assert counts == {"sold": 0, "revoked": 0}
        assert [(p.line, p.code, p.message) for p in problems] == [
            (2, "shop-key-resold", f"this key was already sold on {(DAY - dt.timedelta(days=1)).isoformat()}"),
            (3, "shop-key-resold", f"this key was already sold on {(DAY + dt.timedelta(days=1)).isoformat()}"),
        ]
        assert rows(book) == before
        counts, problems = book.apply_orders("sendowl", [order(2, "1", same)])
        assert (counts, problems) == ({"sold": 0, "revoked": 0}, [])
        assert book.conn.execute("SELECT order_id, id, state FROM orders").fetchall() == [("1", ident(same), SALE)]


def test_states_are_compared_by_value_not_identity(tmp_path: Path) -> None:
    """A row's status may come from any parser: a status read from JSON is equal to the constant, not it."""
    sale, refund = json.loads('["sale", "refund"]')
    assert sale == SALE and refund == REFUND
    with open_ledger(tmp_path / "l.sqlite3") as book:
        (key,) = book.mint(1)
        counts, problems = book.apply_orders("sendowl", [order(2, "1", key, sale)])
        assert (counts, problems) == ({"sold": 1, "revoked": 0}, [])
        assert book.find(key).revoked_at is None
        counts, problems = book.apply_orders("sendowl", [order(2, "1", key, refund)])
        assert (counts, problems) == ({"sold": 0, "revoked": 1}, [])
        assert book.conn.execute("SELECT state FROM orders").fetchall() == [(REFUND,)]
        assert book.find(key).reason == "refund (sendowl order 1)"


def test_an_ignored_line_changes_nothing_and_the_lines_after_it_count(tmp_path: Path) -> None:
    (ignored,) = json.loads('["ignored"]')  # a parser's value: equal to IGNORED, not IGNORED itself
    with open_ledger(tmp_path / "l.sqlite3") as book:
        k1, k2 = book.mint(2)
        counts, problems = book.apply_orders(
            "sendowl", [order(2, "1", k1, IGNORED), order(3, "2", k2, ignored), order(4, "3", k1)]
        )
        assert (counts, problems) == ({"sold": 1, "revoked": 0}, [])
        assert (book.find(k1).sold_on, book.find(k2).sold_on, book.find(k2).revoked_at) == (DAY.isoformat(), None, None)
        assert book.conn.execute("SELECT order_id, state FROM orders").fetchall() == [("3", SALE)]


def test_a_refund_line_after_its_sale_line_wins_too(tmp_path: Path) -> None:
    sale, chargeback = json.loads('["sale", "chargeback"]')
    with open_ledger(tmp_path / "l.sqlite3") as book:
        (key,) = book.mint(1)
        counts, problems = book.apply_orders("sendowl", [order(2, "7", key, sale), order(3, "7", key, chargeback)])
        assert (counts, problems) == ({"sold": 1, "revoked": 1}, [])
        assert book.conn.execute("SELECT state FROM orders").fetchall() == [(CHARGEBACK,)]
        assert book.find(key).reason == "chargeback (sendowl order 7)"


def test_refund_and_chargeback_states_each_revoke_and_ignored_lines_do_nothing(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "l.sqlite3") as book:
        k1, k2, k3 = book.mint(3)
        counts, problems = book.apply_orders(
            "sendowl",
            [order(2, "1", k1, REFUND), order(3, "2", k2, CHARGEBACK), order(4, "3", k3, IGNORED)],
        )
        assert (counts, problems) == ({"sold": 2, "revoked": 2}, [])
        assert {lic.identifier: (lic.sold_on, lic.reason) for lic in book.licenses() if lic.sold_on} == {
            ident(k1): (DAY.isoformat(), "refund (sendowl order 1)"),
            ident(k2): (DAY.isoformat(), "chargeback (sendowl order 2)"),
        }
        assert book.find(k3).sold_on is None
        assert sorted(book.conn.execute("SELECT order_id, state FROM orders").fetchall()) == [
            ("1", REFUND), ("2", CHARGEBACK)
        ]
