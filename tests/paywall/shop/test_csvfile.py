"""Reading a shop's CSV: each limit at itself and one past it, and each problem at the line and column worked out
here by hand (lines are physical lines; columns count characters from 1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from qbank.paywall.shop.csvfile import read_rows

LIMIT_BYTES = 16 * 1024 * 1024  # the documented most a shop export may weigh: 16 MiB
LIMIT_CELL = 1024  # the most characters one cell may hold


def read(tmp_path: Path, data: bytes) -> tuple[list[tuple[int, list[str]]], list[tuple[int, int, str]]]:
    f = tmp_path / "orders.csv"
    f.write_bytes(data)
    rows, problems = read_rows(f, "orders.csv")
    return rows, [(p.line, p.col, p.code) for p in problems]


def sized(n: int) -> bytes:
    """A valid CSV of exactly n bytes: lines of 1000 characters, the last one shorter."""
    line = b"x" * 999 + b"\n"
    body = line * (n // len(line))
    return body + b"y" * (n - len(body))


def test_a_file_at_the_size_limit_is_read_and_one_byte_more_is_refused(tmp_path: Path) -> None:
    rows, problems = read(tmp_path, sized(LIMIT_BYTES))
    assert problems == [] and len(rows) == LIMIT_BYTES // 1000 + 1
    rows, problems = read(tmp_path, sized(LIMIT_BYTES + 1))
    assert rows == [] and problems == [(0, 0, "shop-file-size")]


def test_a_cell_at_the_length_limit_is_read_and_one_character_more_is_a_problem(tmp_path: Path) -> None:
    at, over = "é" * LIMIT_CELL, "é" * (LIMIT_CELL + 1)  # characters, not bytes
    rows, problems = read(tmp_path, f"a,b\n1,{at}\n2,{over}\n".encode())
    assert problems == [(3, 2, "shop-cell-size")]
    assert rows == [(1, ["a", "b"]), (2, ["1", at]), (3, ["2", over])]


def test_a_missing_file_is_a_problem(tmp_path: Path) -> None:
    rows, problems = read_rows(tmp_path / "absent.csv", "absent.csv")
    assert rows == [] and [(p.line, p.col, p.code) for p in problems] == [(0, 0, "shop-file")]
    assert problems[0].message == "cannot read the file: No such file or directory"  # the reason, not the path


def test_a_byte_order_mark_is_dropped_and_nothing_else(tmp_path: Path) -> None:
    rows, problems = read(tmp_path, b"\xef\xbb\xbfOrder ID,Email\n1,a@example.org\n")
    assert problems == [] and rows == [(1, ["Order ID", "Email"]), (2, ["1", "a@example.org"])]
    rows, _ = read(tmp_path, b"Order ID\n")  # no mark: the first character stays
    assert rows == [(1, ["Order ID"])]


@pytest.mark.parametrize(
    ("data", "where"),
    [
        (b"\xffabc\n", (1, 1)),  # first byte of the file
        (b"a,b\nxy,\xff\n", (2, 4)),  # line 2: x y , then the bad byte
        (b"a\n\n\nabc\xfe", (4, 4)),  # after blank lines, last line without a newline
        ("é,\n".encode() + b"\xc3", (2, 1)),  # a cut-off two-byte character
        (b"\n\xff", (2, 1)),  # after a first line that is empty: the file's first byte is a newline
    ],
)
def test_a_byte_that_is_not_utf8_is_placed(tmp_path: Path, data: bytes, where: tuple[int, int]) -> None:
    rows, problems = read(tmp_path, data)
    assert rows == [] and problems == [(*where, "shop-encoding")]


@pytest.mark.parametrize(
    ("data", "where"),
    [
        (b"\x00", (1, 1)),
        (b"a,b\nc,d\x00\n", (2, 4)),
        (b"a\n\nbc\x00", (3, 3)),
        (b"\n\x00", (2, 1)),
    ],
)
def test_a_nul_is_placed(tmp_path: Path, data: bytes, where: tuple[int, int]) -> None:
    rows, problems = read(tmp_path, data)
    assert rows == [] and problems == [(*where, "shop-nul")]


def test_records_keep_the_line_they_start_on_and_blank_lines_are_dropped(tmp_path: Path) -> None:
    data = b'h1,h2\n\n1,"two\nlines"\n , \n2,x\n'
    rows, problems = read(tmp_path, data)
    assert problems == []
    assert rows == [(1, ["h1", "h2"]), (3, ["1", "two\nlines"]), (6, ["2", "x"])]


def test_bad_csv_stops_the_reading_at_the_record_it_starts_on(tmp_path: Path) -> None:
    rows, problems = read(tmp_path, b'h\n1\n\n"a"b\n3\n')
    assert rows == [(1, ["h"]), (2, ["1"])] and problems == [(4, 1, "shop-csv")]
