"""Reading a CSV nobody vouches for: bounded size, strict UTF-8, no NUL, no monster cells.

Whatever is wrong becomes a positioned problem; nothing raises. Lines are physical lines of the
file (a quoted cell may span several: a record is reported at the line it starts on).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from ...problems import Problem, error

MAX_BYTES = 16 << 20
MAX_CELL = 1024


def read_rows(path: Path, rel: str) -> tuple[list[tuple[int, list[str]]], list[Problem]]:
    """``[(line, cells)]`` of every record, header first, or the problems that stop the reading."""
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            return [], [error(rel, 0, 0, "shop-file-size", f"the file has {size} bytes; at most {MAX_BYTES} expected")]
        data = path.read_bytes()
    except OSError as exc:
        return [], [error(rel, 0, 0, "shop-file", f"cannot read the file: {exc.strerror or exc}")]
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        return [], [error(rel, line, col, "shop-encoding", "not UTF-8 here; export the file as UTF-8 CSV")]
    if "\x00" in text:
        at = text.index("\x00")
        line = text.count("\n", 0, at) + 1
        return [], [error(rel, line, at - (text.rfind("\n", 0, at) + 1) + 1, "shop-nul", "a NUL byte in the file")]
    rows: list[tuple[int, list[str]]] = []
    problems: list[Problem] = []
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    start = 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            problems.append(error(rel, start, 1, "shop-csv", f"not valid CSV: {exc}"))
            break
        for i, cell in enumerate(cells, 1):
            if len(cell) > MAX_CELL:
                problems.append(error(rel, start, i, "shop-cell-size", f"a cell of {len(cell)} characters"))
        if any(c.strip() for c in cells):
            rows.append((start, cells))
        start = reader.line_num + 1
    return rows, problems
