"""An order row places its problems at the field's column, and at column 1 for a field the export lacks."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from qbank.paywall.shop.model import OrderRow
from qbank.problems import Level

ROW = OrderRow(
    "orders.csv", 7, "1001", dt.date(2026, 11, 2), "ann@example.org", "QB-KEY", "sale", (("key", 4), ("email", 3))
)


def test_a_problem_sits_at_the_fields_column() -> None:
    p = ROW.problem("key", "shop-unknown-key", "this key is not in the ledger")
    assert (p.path, p.line, p.col, p.code, p.level) == ("orders.csv", 7, 4, "shop-unknown-key", Level.ERROR)
    assert ROW.problem("email", "x", "y").col == 3


def test_a_field_without_a_column_is_placed_at_column_1() -> None:
    assert ROW.col("date") == 1 and ROW.problem("date", "x", "y").col == 1


def test_a_row_read_from_an_export_cannot_be_changed_afterwards() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        ROW.key = "another"  # type: ignore[misc]
