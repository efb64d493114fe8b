"""SendOwl (sendowl.com): license-code products "From List", and the orders of those products.

Key list (what ``qbank license export --shop sendowl`` writes): SendOwl's help article "Adding A
Product with Codes and Licenses" (help.sendowl.com/help/codes-and-licenses) and "How do I add a
license code to a completed order?" (help.sendowl.com/help/how-do-i-add-a-license-code-to-a-completed-order):
the product's License type is "From List"; the codes are pasted under "manage license keys" ->
"Add licenses", one code per line. So the file is plain text, one key per line, no header.

Order export (what ``qbank license import FILE --shop sendowl`` reads): SendOwl's "Product Licenses
report" lists all orders of license-code products, but the help article does not name its columns.
Fallback, chosen and documented here: a header row with these columns, matched case-insensitively,
spaces/underscores alike, extra columns ignored:

  ``Order ID`` (aliases ``order``, ``order number``), ``Date`` (``order date``, ``completed at``,
  ``created at``), ``Buyer Email`` (``email``), ``License Key`` (``license``, ``license code``,
  ``key``), ``State`` (``status``, ``order state``).

State values: ``complete`` (a sale), ``refunded`` (a refund revokes), ``chargeback`` (revokes), and
SendOwl's unpaid states ``initial``/``pending``/``failed`` (ignored: no payment reached SendOwl,
see its article "Why is this order showing an Initial status?"). The sale date is the calendar date
as written (the shop account's time zone): ``YYYY-MM-DD`` optionally followed by a time.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from ...problems import Problem, error
from ..keys import KeyFormatError, format_key, parse_key
from .csvfile import read_rows
from .model import CHARGEBACK, IGNORED, REFUND, SALE, OrderRow

NAME = "sendowl"
COLUMNS = {
    "order_id": ("order_id", "order", "order_number", "order_no"),
    "date": ("date", "order_date", "completed_at", "created_at", "purchase_date"),
    "email": ("buyer_email", "email", "customer_email"),
    "key": ("license_key", "license", "license_code", "key"),
    "status": ("state", "status", "order_state"),
}
STATES = {
    "complete": SALE,
    "completed": SALE,
    "paid": SALE,
    "refunded": REFUND,
    "refund": REFUND,
    "chargeback": CHARGEBACK,
    "charged_back": CHARGEBACK,
    "disputed": CHARGEBACK,
    "initial": IGNORED,
    "pending": IGNORED,
    "failed": IGNORED,
}
_ORDER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")
_EMAIL = re.compile(  # "+" and "=" are fine inside (tags: ann+shop@...), never first (a spreadsheet formula)
    r"[^@\s\x00-\x1f\x7f\"'<>,;=+-][^@\s\x00-\x1f\x7f\"'<>,;]{0,63}"
    r"@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]{1,63})+"
)
_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[T ][0-9:.]+(?:\s*(?:Z|UTC|[+-]\d{2}:?\d{2}))?)?")


def write_key_list(keys: list[str], out: Path) -> None:
    """The key list SendOwl's "Add licenses" box takes: one key per line."""
    out.write_text("".join(k + "\n" for k in keys), "ascii")


def read_key_list(path: Path) -> list[str]:
    """The keys of a key list (the inverse of :func:`write_key_list`)."""
    return [format_key(parse_key(line)) for line in path.read_text("ascii").splitlines() if line.strip()]


def _norm(name: str) -> str:
    return re.sub(r"[\s_-]+", "_", name.strip().lower())


def parse_orders(path: Path, rel: str) -> tuple[list[OrderRow], list[Problem]]:
    """The rows of a SendOwl order export, and a positioned problem for each bad one."""
    records, problems = read_rows(path, rel)
    if problems or not records:
        return [], problems or [error(rel, 1, 1, "shop-empty", "the file has no header row")]
    line0, header = records[0]
    names = {_norm(c): i for i, c in reversed(list(enumerate(header, 1)))}
    cols: dict[str, int] = {}
    for want, aliases in COLUMNS.items():
        at = next((names[a] for a in aliases if a in names), None)
        if at is None:
            problems.append(
                error(rel, line0, 1, "shop-columns", f"no column {aliases[0]!r} (or {', '.join(aliases[1:])})")
            )
        else:
            cols[want] = at
    if problems:
        return [], problems
    rows: list[OrderRow] = []
    for line, cells in records[1:]:

        def cell(name: str, _cells: list[str] = cells) -> str:
            i = cols[name]
            return _cells[i - 1].strip() if i <= len(_cells) else ""

        def bad(name: str, code: str, message: str, _line: int = line) -> None:
            problems.append(error(rel, _line, cols[name], code, message))

        before = len(problems)
        order_id, date_s, email, key_s, state_s = (cell(n) for n in ("order_id", "date", "email", "key", "status"))
        for name, value in (
            ("order_id", order_id),
            ("date", date_s),
            ("email", email),
            ("key", key_s),
            ("status", state_s),
        ):
            if not value:
                bad(name, "shop-missing", f"the {name.replace('_', ' ')} cell is empty")
        if len(problems) > before:
            continue
        if not _ORDER.fullmatch(order_id):
            bad("order_id", "shop-order-id", "an order id is letters, digits and . _ : - (up to 64)")
        m = _DATE.fullmatch(date_s)
        day: dt.date | None = None
        try:
            day = dt.date.fromisoformat(m.group(1)) if m else None
        except ValueError:
            day = None
        if day is None:
            bad("date", "shop-date", f"not a date (YYYY-MM-DD[ time]): {date_s[:40]!r}")
        if not _EMAIL.fullmatch(email):
            bad("email", "shop-email", "not an email address")
        key = ""
        try:
            key = format_key(parse_key(key_s))
        except KeyFormatError as exc:
            bad("key", "shop-key", str(exc))
        state = STATES.get(_norm(state_s))
        if state is None:
            bad("status", "shop-state", f"unknown order state {state_s[:40]!r} (complete, refunded, chargeback, ...)")
        if len(problems) > before or day is None or state is None:
            continue
        rows.append(OrderRow(rel, line, order_id, day, email, key, state, tuple(cols.items())))
    return rows, problems
