"""SendOwl's order export read directly (``parse_orders``): every column alias, every order state, each
cell's rule at its edge and each problem's text and position; the key list's round trip. The import
end to end, through the command line and the ledger, is test_sendowl.py."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from qbank.paywall.keys import format_key, generate_secret
from qbank.paywall.shop import sendowl
from qbank.paywall.shop.model import CHARGEBACK, IGNORED, REFUND, SALE

KEY = format_key(generate_secret())
COLS = (("order_id", 1), ("date", 2), ("email", 3), ("key", 4), ("status", 5))


def parse(tmp_path: Path, text: str) -> tuple[list[sendowl.OrderRow], list[tuple[int, int, str, str]]]:
    path = tmp_path / "orders.csv"
    path.write_text(text)
    rows, problems = sendowl.parse_orders(path, "orders.csv")
    return rows, [(p.line, p.col, p.code, p.message) for p in problems]


def one_row(tmp_path: Path, order: str = "1", date: str = "2026-11-02", email: str = "a@example.org",
            key: str = KEY, state: str = "complete") -> tuple[list[sendowl.OrderRow], list[tuple[int, int, str, str]]]:
    return parse(tmp_path, f"Order ID,Date,Buyer Email,License Key,State\n{order},{date},{email},{key},{state}\n")


# --- the header -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "alias"),
    [(field, alias) for field, aliases in {
        "order_id": ("Order ID", "order", "Order Number", "order_no", "order-id"),
        "date": ("Date", "Order Date", "completed_at", "Created At", "purchase date"),
        "email": ("Buyer Email", "email", "Customer_Email"),
        "key": ("License Key", "license", "License Code", "KEY"),
        "status": ("State", "status", "Order State"),
    }.items() for alias in aliases],
)
def test_every_column_alias_is_read(tmp_path: Path, field: str, alias: str) -> None:
    header = {"order_id": "Order ID", "date": "Date", "email": "Buyer Email", "key": "License Key", "status": "State"}
    header[field] = alias
    rows, problems = parse(tmp_path, ",".join(header.values()) + f"\n7,2026-11-02,a@example.org,{KEY},complete\n")
    assert problems == []
    assert [(r.order_id, r.day, r.email, r.key, r.status) for r in rows] == [
        ("7", dt.date(2026, 11, 2), "a@example.org", KEY, SALE)
    ]


def test_columns_in_any_order_with_extra_ones_keep_their_positions(tmp_path: Path) -> None:
    rows, problems = parse(
        tmp_path, f"Note,State,License Key,Date,Buyer Email,Order ID\nhi,refunded,{KEY},2026-11-02,a@example.org,9\n"
    )
    assert problems == []
    (row,) = rows
    assert (row.path, row.line, row.order_id, row.status) == ("orders.csv", 2, "9", REFUND)
    assert dict(row.cols) == {"order_id": 6, "date": 4, "email": 5, "key": 3, "status": 2}


def test_a_repeated_column_counts_at_its_first_place(tmp_path: Path) -> None:
    rows, problems = parse(
        tmp_path, f"Order ID,Date,Buyer Email,License Key,State,State\n1,2026-11-02,a@example.org,{KEY},complete,x\n"
    )
    assert problems == [] and [r.status for r in rows] == [SALE] and dict(rows[0].cols)["status"] == 5


def test_each_missing_column_is_named_with_its_aliases(tmp_path: Path) -> None:
    rows, problems = parse(tmp_path, "Note,Buyer Email,State\nx,a@example.org,complete\n")
    assert rows == []
    assert problems == [
        (1, 1, "shop-columns", "no column 'order_id' (or order, order_number, order_no)"),
        (1, 1, "shop-columns", "no column 'date' (or order_date, completed_at, created_at, purchase_date)"),
        (1, 1, "shop-columns", "no column 'license_key' (or license, license_code, key)"),
    ]


def test_an_empty_file_has_no_header_row(tmp_path: Path) -> None:
    assert parse(tmp_path, "") == ([], [(1, 1, "shop-empty", "the file has no header row")])


def test_a_header_alone_is_no_orders(tmp_path: Path) -> None:
    assert parse(tmp_path, "Order ID,Date,Buyer Email,License Key,State\n") == ([], [])


# --- the states -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "state"),
    [
        ("complete", SALE), ("Completed", SALE), ("PAID", SALE),
        ("refunded", REFUND), ("Refund", REFUND),
        ("chargeback", CHARGEBACK), ("Charged Back", CHARGEBACK), ("charged-back", CHARGEBACK),
        ("disputed", CHARGEBACK),
        ("initial", IGNORED), ("pending", IGNORED), (" Failed ", IGNORED),
    ],
)
def test_every_order_state(tmp_path: Path, written: str, state: str) -> None:
    rows, problems = one_row(tmp_path, state=written)
    assert problems == [] and [r.status for r in rows] == [state]


def test_an_unknown_state_is_quoted_to_forty_characters(tmp_path: Path) -> None:
    rows, problems = one_row(tmp_path, state="shipped" + "x" * 60)
    assert rows == []
    assert problems == [
        (2, 5, "shop-state", f"unknown order state {('shipped' + 'x' * 33)!r} (complete, refunded, chargeback, ...)")
    ]


# --- each cell --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "day"),
    [
        ("2026-11-02", dt.date(2026, 11, 2)),
        ("2026-11-02T23:59:59Z", dt.date(2026, 11, 2)),
        ("2026-11-02 23:59:59.123 UTC", dt.date(2026, 11, 2)),
        ("2026-11-02T10:00:00+05:30", dt.date(2026, 11, 2)),
        ("2026-11-02 10:00 -0800", dt.date(2026, 11, 2)),
        ("2028-02-29", dt.date(2028, 2, 29)),
    ],
)
def test_a_date_is_the_calendar_date_as_written(tmp_path: Path, written: str, day: dt.date) -> None:
    rows, problems = one_row(tmp_path, date=written)
    assert problems == [] and [r.day for r in rows] == [day]


@pytest.mark.parametrize(
    "written", ["02/11/2026", "2026-11-31", "2027-02-29", "2026-11-02x", "2026-11-02T", "26-11-02"]
)
def test_a_date_that_is_not_one(tmp_path: Path, written: str) -> None:
    rows, problems = one_row(tmp_path, date=written)
    assert rows == [] and problems == [(2, 2, "shop-date", f"not a date (YYYY-MM-DD[ time]): {written!r}")]


def test_a_bad_date_is_quoted_to_forty_characters(tmp_path: Path) -> None:
    written = "2026-11-02 at " + "9" * 60
    rows, problems = one_row(tmp_path, date=written)
    assert rows == [] and problems == [(2, 2, "shop-date", f"not a date (YYYY-MM-DD[ time]): {written[:40]!r}")]


@pytest.mark.parametrize("order", ["1", "A-1.2_3:4", "z" + "9" * 63])
def test_an_order_id_of_up_to_64_characters(tmp_path: Path, order: str) -> None:
    rows, problems = one_row(tmp_path, order=order)
    assert problems == [] and [r.order_id for r in rows] == [order]


@pytest.mark.parametrize("order", ["z" + "9" * 64, "-1", "1 2", "1/2", "=1"])
def test_an_order_id_that_is_not_one(tmp_path: Path, order: str) -> None:
    rows, problems = one_row(tmp_path, order=order)
    assert rows == []
    assert problems == [(2, 1, "shop-order-id", "an order id is letters, digits and . _ : - (up to 64)")]


@pytest.mark.parametrize("email", ["a@example.org", "first.last_tag@mail.example.co.uk", "x" * 64 + "@e.io",
                                   "ann+shop@example.org", "a=b@example.org", "a-b@example.org", "a+@e.io"])
def test_an_email(tmp_path: Path, email: str) -> None:
    rows, problems = one_row(tmp_path, email=email)
    assert problems == [] and [r.email for r in rows] == [email]


@pytest.mark.parametrize("email", ["a@", "@example.org", "a@example", "x" * 65 + "@e.io", "a b@example.org",
                                   "a@-example.org", "a<b@example.org", "a@example..org",
                                   "+a@example.org", "=a@example.org", "-a@example.org", "@a@example.org",
                                   "a+b;c@example.org", "+" + "x" * 63 + "@e.io"])
def test_not_an_email(tmp_path: Path, email: str) -> None:
    rows, problems = one_row(tmp_path, email=email)
    assert rows == [] and problems == [(2, 3, "shop-email", "not an email address")]


def test_a_key_is_kept_in_its_printed_form(tmp_path: Path) -> None:
    rows, problems = one_row(tmp_path, key=KEY.lower().replace("-", " "))
    assert problems == [] and [r.key for r in rows] == [KEY]


def test_a_bad_key_says_why(tmp_path: Path) -> None:
    rows, problems = one_row(tmp_path, key="QB-123")
    assert rows == [] and [(line, col, code) for line, col, code, _ in problems] == [(2, 4, "shop-key")]
    assert "32" in problems[0][3]


def test_every_empty_cell_is_named_and_nothing_else_is_checked(tmp_path: Path) -> None:
    rows, problems = parse(
        tmp_path, "Order ID,Date,Buyer Email,License Key,State,Note\n ,,, ,,x\n,2026-11-02,bad,QB,,x\n"
    )
    assert rows == []
    assert problems == [
        (2, 1, "shop-missing", "the order id cell is empty"),
        (2, 2, "shop-missing", "the date cell is empty"),
        (2, 3, "shop-missing", "the email cell is empty"),
        (2, 4, "shop-missing", "the key cell is empty"),
        (2, 5, "shop-missing", "the status cell is empty"),
        (3, 1, "shop-missing", "the order id cell is empty"),
        (3, 5, "shop-missing", "the status cell is empty"),
    ]


def test_a_short_row_has_empty_cells(tmp_path: Path) -> None:
    text = "State,Order ID,Date,Buyer Email,License Key\ncomplete,1,2026-11-02,a@example.org\n"
    rows, problems = parse(tmp_path, text)
    assert rows == [] and problems == [(2, 5, "shop-missing", "the key cell is empty")]


def test_every_bad_cell_of_a_row_and_every_row_is_reported(tmp_path: Path) -> None:
    rows, problems = parse(
        tmp_path,
        "Order ID,Date,Buyer Email,License Key,State\n"
        "=1,2026-13-01,nobody,QB-1,shipped\n"
        f"2,2026-11-02,b@example.org,{KEY},paid\n"
        "3,someday,c@example.org,QB-1,complete\n",
    )
    assert [(r.line, r.order_id) for r in rows] == [(3, "2")]
    assert [(line, col, code) for line, col, code, _ in problems] == [
        (2, 1, "shop-order-id"), (2, 2, "shop-date"), (2, 3, "shop-email"), (2, 4, "shop-key"), (2, 5, "shop-state"),
        (4, 2, "shop-date"), (4, 4, "shop-key"),
    ]


# --- the key list -----------------------------------------------------------------------------------------


def test_the_key_list_is_one_key_a_line_and_reads_back(tmp_path: Path) -> None:
    keys = [format_key(generate_secret()) for _ in range(3)]
    out = tmp_path / "keys.txt"
    sendowl.write_key_list(keys, out)
    assert out.read_bytes() == ("\n".join(keys) + "\n").encode("ascii")
    out.write_text("\n" + keys[0].lower() + "\n  \n" + keys[1].replace("-", "") + "\n" + keys[2] + "\n\n")
    assert sendowl.read_key_list(out) == keys
    sendowl.write_key_list([], out)
    assert out.read_bytes() == b""


def test_a_good_row_after_hundreds_of_bad_ones_is_still_read(tmp_path: Path) -> None:
    # past 256 problems the counts are ints CPython no longer caches: compared by value, not identity
    bad = "".join(f"={i},2026-11-02,a@example.org,{KEY},complete\n" for i in range(300))
    good = f"ok,2026-11-02,a@example.org,{KEY},paid\n"
    rows, problems = parse(tmp_path, f"Order ID,Date,Buyer Email,License Key,State\n{bad}{good}")
    assert len(problems) == 300 and {code for _, _, code, _ in problems} == {"shop-order-id"}
    assert [(r.line, r.order_id) for r in rows] == [(302, "ok")]
