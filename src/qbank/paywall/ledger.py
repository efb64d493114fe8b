"""The license ledger: SQLite outside the repository, never deployed.

What it stores per license: the public identifier, the key-encryption key, dates, the buyer's email.
It never stores the printed key. Trade-off, chosen knowingly: a build must wrap the release key for
every active license, so it needs each license's key-encryption key (or the key itself); storing the
KEK rather than the key means a leaked ledger cannot be typed into the site's unlock dialog or
resold as keys, but it still lets the thief unwrap slots and read the premium text of every release
until the affected licenses are revoked (and reissued). Treat the ledger as a secret as sensitive as
the premium content; keep it out of CI and out of ``site/``.
"""

from __future__ import annotations

import calendar
import csv
import datetime as dt
import os
import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..problems import Problem, error
from .keys import KeyFormatError, derive, format_key, generate_secret, parse_key
from .shop.model import IGNORED, SALE, OrderRow
from .slots import Active, Ended

TERM_MONTHS = 6
SCHEMA = """
CREATE TABLE IF NOT EXISTS licenses (
  id TEXT PRIMARY KEY,            -- HKDF identifier (hex), public: it names the keyslot
  kek BLOB NOT NULL,              -- HKDF key-encryption key: secret, see the module docstring
  minted_at TEXT NOT NULL,
  sold_on TEXT,                   -- ISO date the six months start
  email TEXT,
  expires_on TEXT,                -- sold_on + six months; the license works before this date
  revoked_at TEXT,
  reason TEXT
);
CREATE TABLE IF NOT EXISTS orders (  -- one shop order line per license: what makes an import idempotent
  shop TEXT NOT NULL,
  order_id TEXT NOT NULL,
  id TEXT NOT NULL REFERENCES licenses(id),
  sold_on TEXT NOT NULL,
  email TEXT NOT NULL,
  state TEXT NOT NULL,            -- sale, refund or chargeback
  PRIMARY KEY (shop, order_id, id)
);
"""


def default_ledger_path() -> Path:
    """``$QBANK_LEDGER``, else ``$XDG_DATA_HOME/qbank/ledger.sqlite3`` (``~/.local/share`` by default)."""
    if os.environ.get("QBANK_LEDGER"):
        return Path(os.environ["QBANK_LEDGER"]).expanduser()
    data = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return data / "qbank" / "ledger.sqlite3"


def add_months(day: dt.date, months: int) -> dt.date:
    """``day`` plus whole calendar months, clamped to the month's last day (Aug 31 + 6 = Feb 28/29)."""
    m = day.month - 1 + months
    year, month = day.year + m // 12, m % 12 + 1
    return dt.date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


class LedgerError(ValueError):
    """An operation the ledger refuses (unknown key, conflicting sale, ...)."""


@dataclass(frozen=True)
class License:
    """One row of the ledger as the operator sees it."""

    identifier: str
    minted_at: str
    sold_on: str | None
    email: str | None
    expires_on: str | None
    revoked_at: str | None
    reason: str | None

    def status(self, today: dt.date) -> str:
        """``unsold``, ``active``, ``expired`` or ``revoked`` on ``today``."""
        if self.revoked_at:
            return "revoked"
        if self.expires_on is None:
            return "unsold"
        return "active" if today < dt.date.fromisoformat(self.expires_on) else "expired"


class Ledger:
    """An open ledger; use :func:`open_ledger`."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def mint(self, count: int, now: dt.datetime | None = None, secrets: list[bytes] | None = None) -> list[str]:
        """Make ``count`` unsold keys; return the printed keys, which the ledger does not keep.

        ``secrets`` (``count`` of them) replaces the fresh random ones: a store that replays an operation
        on a newer copy of the ledger must insert the very keys it already showed.
        """
        stamp = (now or dt.datetime.now(dt.UTC)).isoformat(timespec="seconds")
        chosen = secrets if secrets is not None else [generate_secret() for _ in range(count)]
        if len(chosen) != count:
            raise ValueError(f"{count} keys asked, {len(chosen)} secrets given")
        keys = []
        with self.conn:
            for secret in chosen:
                d = derive(secret)
                self.conn.execute(
                    "INSERT INTO licenses (id, kek, minted_at) VALUES (?, ?, ?)", (d.identifier, d.kek, stamp)
                )
                keys.append(format_key(secret))
        return keys

    def _row(self, identifier: str) -> License | None:
        row = self.conn.execute(
            "SELECT id, minted_at, sold_on, email, expires_on, revoked_at, reason FROM licenses WHERE id = ?",
            (identifier,),
        ).fetchone()
        return License(*row) if row else None

    def find(self, key_or_id: str) -> License:
        """The license of a printed key or of an identifier (or a unique prefix of one, 8+ characters)."""
        try:
            identifier = derive(parse_key(key_or_id)).identifier
        except KeyFormatError as exc:
            ident = key_or_id.strip().lower()
            if len(ident) < 8 or any(c not in "0123456789abcdef" for c in ident):
                raise LedgerError(f"not a license key ({exc}) nor an identifier") from exc
            rows = self.conn.execute("SELECT id FROM licenses WHERE id LIKE ?", (ident + "%",)).fetchall()
            if len(rows) != 1:
                raise LedgerError(f"{len(rows)} licenses have an identifier starting {ident!r}") from exc
            identifier = rows[0][0]
        lic = self._row(identifier)
        if lic is None:
            raise LedgerError("this key is not in the ledger (was it minted with this ledger?)")
        return lic

    def sell(self, key: str, day: dt.date, email: str) -> License:
        """Record a sale: the six months start on ``day``. Re-recording the same sale changes nothing."""
        lic = self.find(key)
        if lic.revoked_at:
            raise LedgerError("this license was revoked; mint a new one")
        expires = add_months(day, TERM_MONTHS).isoformat()
        if lic.sold_on is not None:
            if (lic.sold_on, lic.email) == (day.isoformat(), email):
                return lic
            raise LedgerError(f"this license was already sold on {lic.sold_on} to {lic.email}")
        with self.conn:
            self.conn.execute(
                "UPDATE licenses SET sold_on = ?, email = ?, expires_on = ? WHERE id = ?",
                (day.isoformat(), email, expires, lic.identifier),
            )
        return self.find(lic.identifier)

    def revoke(self, key_or_id: str, reason: str = "", now: dt.datetime | None = None) -> License:
        """Revoke a license: the next keyslot step (deploy or daily refresh) opens nothing for it."""
        lic = self.find(key_or_id)
        if not lic.revoked_at:
            stamp = (now or dt.datetime.now(dt.UTC)).isoformat(timespec="seconds")
            with self.conn:
                self.conn.execute(
                    "UPDATE licenses SET revoked_at = ?, reason = ? WHERE id = ?", (stamp, reason, lic.identifier)
                )
        return self.find(lic.identifier)

    def licenses(self) -> list[License]:
        """Every license, oldest first."""
        rows = self.conn.execute(
            "SELECT id, minted_at, sold_on, email, expires_on, revoked_at, reason FROM licenses ORDER BY minted_at, id"
        ).fetchall()
        return [License(*r) for r in rows]

    def for_build(self, today: dt.date) -> tuple[list[Active], list[Ended]]:
        """Licenses that get a keyslot (unsold or active) and those that get none, with the reason."""
        active: list[Active] = []
        ended: list[Ended] = []
        rows = self.conn.execute("SELECT id, kek, expires_on, revoked_at FROM licenses").fetchall()
        for identifier, kek, expires_on, revoked_at in rows:
            if revoked_at:
                ended.append(Ended(identifier, "revoked", None, bytes(kek)))
            elif expires_on is not None and today >= dt.date.fromisoformat(expires_on):
                ended.append(Ended(identifier, "expired", expires_on, bytes(kek)))
            else:
                active.append(Active(identifier, bytes(kek), expires_on))
        return active, ended

    def import_csv(self, path: Path) -> tuple[int, list[Problem]]:
        """Record the sales of a shop's CSV export (columns key, date, email); returns sales recorded."""
        problems: list[Problem] = []
        rel = path.as_posix()
        sold = 0
        with path.open(newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            cols = {re.sub(r"[\s_-]+", "_", (c or "").strip().lower()): c for c in reader.fieldnames or []}
            pick = {
                want: next((cols[c] for c in names if c in cols), None)
                for want, names in {
                    "key": ("key", "license_key", "license"),
                    "date": ("date", "sold_on", "created_at", "order_date", "purchase_date"),
                    "email": ("email", "customer_email", "buyer_email"),
                }.items()
            }
            missing = [w for w, c in pick.items() if c is None]
            if missing:
                return 0, [error(rel, 1, 1, "ledger-csv-columns", f"the CSV has no column for {', '.join(missing)}")]
            for row in reader:
                line = reader.line_num
                try:
                    day = dt.date.fromisoformat((row[pick["date"] or ""] or "").strip()[:10])
                    self.sell(row[pick["key"] or ""] or "", day, (row[pick["email"] or ""] or "").strip())
                    sold += 1
                except (ValueError, LedgerError) as exc:
                    problems.append(error(rel, line, 1, "ledger-csv-row", str(exc)))
        return sold, problems

    def apply_orders(self, shop: str, rows: list[OrderRow]) -> tuple[dict[str, int], list[Problem]]:
        """Record a shop's order lines: sales, and refunds/chargebacks that revoke; all or nothing.

        Keyed by (shop, order id, license): importing the same export again changes nothing, and the
        order of the rows does not matter (a refund line wins over a sale line of the same order).
        Any problem (unknown key, a key in two orders, an order whose date or email disagrees with an
        earlier line or with the ledger) rejects the whole import: the ledger is left as it was.
        """
        problems: list[Problem] = []
        wanted: dict[tuple[str, str], tuple[OrderRow, str]] = {}
        order_of: dict[str, tuple[str, OrderRow]] = {}
        first: dict[str, OrderRow] = {}
        for row in sorted(rows, key=lambda r: r.line):
            if row.status == IGNORED:
                continue
            seen = first.setdefault(row.order_id, row)
            if (seen.day, seen.email) != (row.day, row.email):
                field = "date" if seen.day != row.day else "email"
                problems.append(
                    row.problem(
                        field, "shop-order-conflict", f"order {row.order_id} has another {field} on line {seen.line}"
                    )
                )
                continue
            ident = derive(parse_key(row.key)).identifier
            lic = self._row(ident)
            if lic is None:
                problems.append(row.problem("key", "shop-unknown-key", "this key is not in the ledger"))
                continue
            other = order_of.setdefault(ident, (row.order_id, row))
            if other[0] != row.order_id:
                problems.append(
                    row.problem(
                        "key", "shop-key-resold", f"this key is also in order {other[0]} (line {other[1].line})"
                    )
                )
                continue
            known = self.conn.execute(
                "SELECT order_id, sold_on, email FROM orders WHERE shop = ? AND id = ?", (shop, ident)
            ).fetchall()
            if any(o != row.order_id for o, _, _ in known):
                problems.append(row.problem("key", "shop-key-resold", "this key was sold in another order already"))
                continue
            if any((d, e) != (row.day.isoformat(), row.email) for _, d, e in known):
                problems.append(
                    row.problem(
                        "date",
                        "shop-order-conflict",
                        f"order {row.order_id} was imported before with another date or email",
                    )
                )
                continue
            if not known and lic.sold_on is not None and (lic.sold_on, lic.email) != (row.day.isoformat(), row.email):
                problems.append(row.problem("key", "shop-key-resold", f"this key was already sold on {lic.sold_on}"))
                continue
            if not known and lic.revoked_at and row.status == SALE:
                problems.append(row.problem("key", "shop-revoked", "this key was revoked; it cannot be sold"))
                continue
            prev = wanted.get((row.order_id, ident))
            if prev is None or prev[1] == SALE:
                wanted[(row.order_id, ident)] = (row, row.status)
        counts = {"sold": 0, "revoked": 0}
        if problems:
            return counts, problems
        stamp = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        with self.conn:
            for (order_id, ident), (row, state) in sorted(wanted.items()):
                day = row.day.isoformat()
                cur = self.conn.execute(
                    "INSERT OR IGNORE INTO orders (shop, order_id, id, sold_on, email, state)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (shop, order_id, ident, day, row.email, state),
                )
                if cur.rowcount == 0 and state != SALE:
                    self.conn.execute(
                        "UPDATE orders SET state = ? WHERE shop = ? AND order_id = ? AND id = ? AND state = ?",
                        (state, shop, order_id, ident, SALE),
                    )
                cur = self.conn.execute(
                    "UPDATE licenses SET sold_on = ?, email = ?, expires_on = ? WHERE id = ? AND sold_on IS NULL",
                    (day, row.email, add_months(row.day, TERM_MONTHS).isoformat(), ident),
                )
                counts["sold"] += cur.rowcount
                if state != SALE:
                    cur = self.conn.execute(
                        "UPDATE licenses SET revoked_at = ?, reason = ? WHERE id = ? AND revoked_at IS NULL",
                        (stamp, f"{state} ({shop} order {order_id})", ident),
                    )
                    counts["revoked"] += cur.rowcount
        return counts, problems


@contextmanager
def open_ledger(path: Path, *, create: bool = True) -> Iterator[Ledger]:
    """Open (and with ``create``, make) the ledger at ``path``; read-only when ``create`` is False."""
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path)
        os.chmod(path, 0o600)  # the ledger holds key-encryption keys
        conn.executescript(SCHEMA)
    else:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        yield Ledger(conn)
    finally:
        conn.close()
