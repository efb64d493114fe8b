"""When an epoch ends: the decision, as a pure function of the epoch's record and today's readers.

An epoch's record names its id, the day it began, the site it serves, the readers it has been opened to
(every license identifier that ever got an active slot in it) and its key sealed to the release identity.
A new epoch starts when

- a reader the epoch was opened to no longer may read (revoked, expired, or gone from the ledger): they
  hold the epoch key, so anything sealed under it later would be theirs; or
- the epoch is ``max_age`` old (30 days by default): a bound on how long a leaked epoch key (a reader's
  browser holds it, non-extractable but not beyond a debugger) opens sections written after the leak.
  With six-month licenses sold every week, expiries re-key far more often than that in practice; the
  schedule matters for a quiet shop, and costs one re-upload of the premium pages a month; or
- there is no epoch yet, or the recorded one belongs to another site URL.

A new reader never starts one: their slot wraps the current epoch key, and nothing is re-encrypted.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field

from ..paywall.recipient import SealedRelease, SealError

STATE_FORMAT = 1
MAX_AGE = dt.timedelta(days=30)


class EpochError(ValueError):
    """An epoch record that cannot be used (malformed, or for another site)."""


@dataclass(frozen=True)
class EpochState:
    """The record of the current epoch (no secret in the clear: the key is sealed)."""

    epoch_id: str
    began: dt.date
    sealed: SealedRelease
    readers: frozenset[str] = field(default_factory=frozenset)

    @property
    def site_url(self) -> str:
        """The site the epoch's key is bound to (inside the sealed box's associated data)."""
        return self.sealed.site_url

    def to_json(self) -> bytes:
        """The record's bytes (sorted, stable)."""
        doc = {
            "format": STATE_FORMAT,
            "epoch": self.epoch_id,
            "began": self.began.isoformat(),
            "readers": sorted(self.readers),
            "sealed": json.loads(self.sealed.to_json()),
        }
        return (json.dumps(doc, sort_keys=True, indent=1) + "\n").encode()

    @classmethod
    def from_json(cls, data: bytes, where: str) -> EpochState:
        """Parse a record; an :class:`EpochError` naming ``where`` when malformed."""
        try:
            doc = json.loads(data)
        except json.JSONDecodeError as exc:
            raise EpochError(f"{where}:{exc.lineno}:{exc.colno}: not an epoch record: {exc.msg}") from None
        except ValueError as exc:  # not UTF-8
            raise EpochError(f"{where}: not an epoch record ({type(exc).__name__})") from None
        try:
            if not isinstance(doc, dict) or doc.get("format") != STATE_FORMAT:
                raise EpochError(f"{where}: not an epoch record")
            readers = doc["readers"]
            if not isinstance(readers, list) or not all(isinstance(r, str) and r for r in readers):
                raise EpochError(f"{where}: 'readers' must be a list of license identifiers")
            if not isinstance(doc["epoch"], str) or not isinstance(doc["began"], str):
                raise EpochError(f"{where}: 'epoch' and 'began' must be strings")
            sealed = SealedRelease.from_json(json.dumps(doc["sealed"]).encode())
            state = cls(doc["epoch"], dt.date.fromisoformat(doc["began"]), sealed, frozenset(readers))
        except (ValueError, KeyError, TypeError, SealError) as exc:
            if isinstance(exc, EpochError):
                raise
            raise EpochError(f"{where}: malformed epoch record ({type(exc).__name__}: {exc})") from None
        if sealed.release_id != state.epoch_id:
            raise EpochError(f"{where}: the sealed key belongs to {sealed.release_id}, not epoch {state.epoch_id}")
        return state


def rekey_reason(
    state: EpochState | None,
    readers_now: frozenset[str],
    site_url: str,
    today: dt.date,
    max_age: dt.timedelta = MAX_AGE,
) -> str | None:
    """Why a new epoch must begin today, or None when the current one continues."""
    if state is None:
        return "no epoch yet"
    if state.site_url != site_url:
        return f"the epoch serves {state.site_url}, this site is {site_url}"
    lost = state.readers - readers_now
    if lost:
        return f"{len(lost)} reader(s) of the epoch may no longer read (revoked, expired or removed)"
    if today - state.began >= max_age:
        return f"the epoch began {state.began.isoformat()}, {max_age.days} days is its longest life"
    return None


def admit(state: EpochState | None, live_release: str, readers: frozenset[str]) -> EpochState | None:
    """The record with the readers a keyslot refresh lets into the live epoch, or None when it needs no change.

    Every identifier that gets an active slot wrapping an epoch's key must be in that epoch's record before the
    slot is published, or its later loss would not end the epoch (``rekey_reason`` only knows the record).
    No record, or a record of another epoch (a deploy that saved its new epoch and then failed to upload):
    nothing later is sealed under the live key, so there is nothing to record.
    """
    if state is None or state.epoch_id != live_release or readers <= state.readers:
        return None
    return EpochState(state.epoch_id, state.began, state.sealed, state.readers | readers)
