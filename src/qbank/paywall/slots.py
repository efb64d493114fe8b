"""Keyslot files: the release key wrapped once per active license, sharded by identifier prefix.

Every shard file is written, empty or not, so a reader's request reveals only its shard (1 of 256),
and the set of files does not reveal how many licenses exist per shard. A shard also lists the
identifiers of expired and revoked licenses (with no key material) so the browser can say why a
key stopped working; only the holder of a key can compute its identifier.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from .release import FORMAT, Release, b64, wrap

SHARD_CHARS = 2
SLOT_DIR = "assets/keyslots"


def shard_of(identifier: str) -> str:
    """The shard (a hex prefix) of an identifier."""
    return identifier[:SHARD_CHARS]


@dataclass(frozen=True)
class Active:
    """A license that gets a slot: minted and unsold, or sold and within its six months."""

    identifier: str
    kek: bytes
    until: str | None


@dataclass(frozen=True)
class Ended:
    """A license that gets no slot, and why: ``expired`` (with the date) or ``revoked``."""

    identifier: str
    status: str
    on: str | None


def keyslot_files(release: Release, active: Iterable[Active], ended: Iterable[Ended]) -> dict[str, bytes]:
    """Every shard file of a release, keyed by its path under the site folder."""
    shards: dict[str, dict[str, object]] = {
        f"{i:0{SHARD_CHARS}x}": {"v": FORMAT, "release": release.release_id, "slots": {}, "ended": {}}
        for i in range(16**SHARD_CHARS)
    }
    for a in active:
        slot: dict[str, str] = {"k": b64(wrap(a.kek, release.key))}
        if a.until:
            slot["until"] = a.until
        shards[shard_of(a.identifier)]["slots"][a.identifier] = slot  # type: ignore[index]
    for e in ended:
        info = {"s": e.status} | ({"on": e.on} if e.on else {})
        shards[shard_of(e.identifier)]["ended"][e.identifier] = info  # type: ignore[index]
    return {
        f"{SLOT_DIR}/{name}.json": json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
        for name, body in shards.items()
    }
