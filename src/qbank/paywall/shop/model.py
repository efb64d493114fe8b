"""What every shop format yields: order rows with their positions, or positioned problems."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from ...problems import Problem, error

SALE, REFUND, CHARGEBACK, IGNORED = "sale", "refund", "chargeback", "ignored"


@dataclass(frozen=True)
class OrderRow:
    """One license line of a shop's order export. ``cols`` maps a field to its 1-based column."""

    path: str
    line: int
    order_id: str
    day: dt.date
    email: str
    key: str
    status: str
    cols: tuple[tuple[str, int], ...]

    def col(self, name: str) -> int:
        """The column of field ``name`` (1 when unknown)."""
        return dict(self.cols).get(name, 1)

    def problem(self, field: str, code: str, message: str) -> Problem:
        """An error at this row's ``field``."""
        return error(self.path, self.line, self.col(field), code, message)
