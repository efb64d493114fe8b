"""Keyslot format v2: per-release paths, status inside the encrypted entry, padding, determinism, tampering."""

from __future__ import annotations

import json
import secrets

import pytest

from qbank.paywall.keys import derive
from qbank.paywall.slots import (
    BLOCK,
    SHARDS,
    Active,
    Ended,
    Status,
    keyslot_files,
    open_entry,
    shard_of,
    shard_path,
)

RID = "0123456789abcdef"


def licenses(n: int) -> list[Active]:
    out = []
    for _ in range(n):
        d = derive(secrets.token_bytes(16))
        out.append(Active(d.identifier, d.kek, "2027-06-01"))
    return out


def test_entries_say_active_expired_revoked_and_only_active_yields_the_key() -> None:
    key = secrets.token_bytes(32)
    a, e, r, stranger = (derive(secrets.token_bytes(16)) for _ in range(4))
    files = keyslot_files(
        key, RID, [Active(a.identifier, a.kek, "2027-01-01")],
        [Ended(e.identifier, "expired", "2020-01-01", e.kek), Ended(r.identifier, "revoked", None, r.kek)],
    )
    assert len(files) == SHARDS and all(p.startswith(f"assets/keyslots/{RID}/") for p in files)

    def shard(d: object) -> dict[str, object]:
        body: dict[str, object] = json.loads(files[shard_path(RID, shard_of(d.identifier))])  # type: ignore[attr-defined]
        return body

    assert open_entry(shard(a), a.identifier, a.kek) == (Status("active", "2027-01-01"), key)
    assert open_entry(shard(e), e.identifier, e.kek) == (Status("expired", "2020-01-01"), None)
    assert open_entry(shard(r), r.identifier, r.kek) == (Status("revoked", None), None)
    assert open_entry(shard(stranger), stranger.identifier, stranger.kek) is None
    # nothing readable in the clear: no date, no status word, no release key
    blob = b"".join(files.values())
    for word in (b"2027-01-01", b"2020-01-01", b"expired", b"revoked", b"active", key.hex().encode()):
        assert word not in blob
    # another license's KEK does not open an entry
    with pytest.raises(ValueError):
        open_entry(shard(a), a.identifier, e.kek)


def test_every_entry_has_one_shape() -> None:
    key = secrets.token_bytes(32)
    a, e = derive(secrets.token_bytes(16)), derive(secrets.token_bytes(16))
    files = keyslot_files(key, RID, [Active(a.identifier, a.kek, None)], [Ended(e.identifier, "revoked", None, e.kek)])
    shapes = set()
    for body in files.values():
        doc = json.loads(body)
        assert len(doc["slots"]) == BLOCK
        for ident, (k, m) in doc["slots"].items():
            shapes.add((len(ident), len(k), len(m)))
    assert shapes == {(32, 56, 124)}  # identifier hex, AES-KW (40 B), nonce + 64 B status + tag (92 B)


def test_padding_hides_how_many_licenses_there_are() -> None:
    key = secrets.token_bytes(32)
    one = keyslot_files(key, RID, licenses(1), [])
    thirty = keyslot_files(key, RID, licenses(30), [])
    assert one.keys() == thirty.keys()
    assert [len(b) for b in one.values()] == [len(b) for b in thirty.values()]
    assert {len(json.loads(b)["slots"]) for b in [*one.values(), *thirty.values()]} == {BLOCK}
    assert one != thirty  # and yet the contents differ


def test_a_full_shard_grows_every_shard_by_whole_blocks() -> None:
    key = secrets.token_bytes(32)
    crowd = licenses(400)  # some shard is bound to hold more than 1 with block 1
    files = keyslot_files(key, RID, crowd, [], block=2)
    counts = {len(json.loads(b)["slots"]) for b in files.values()}
    assert len(counts) == 1 and counts.pop() % 2 == 0
    found = 0
    for lic in crowd:
        got = open_entry(json.loads(files[shard_path(RID, shard_of(lic.identifier))]), lic.identifier, lic.kek)
        found += got is not None and got[1] == key
    assert found == len(crowd)


def test_same_release_same_licenses_same_bytes() -> None:
    key = secrets.token_bytes(32)
    lic = licenses(5)
    ended = [Ended(lic[0].identifier, "revoked", None, lic[0].kek)]
    assert keyslot_files(key, RID, lic[1:], ended) == keyslot_files(key, RID, list(reversed(lic[1:])), ended)
    # a change touches only the shard of the license that changed
    before = keyslot_files(key, RID, lic, [])
    after = keyslot_files(key, RID, lic[1:], ended)
    changed = [p for p in before if before[p] != after[p]]
    assert changed == [shard_path(RID, shard_of(lic[0].identifier))]
    # another release key: every byte differs, decoys included
    other = keyslot_files(secrets.token_bytes(32), RID, lic, [])
    assert all(other[p] != before[p] for p in before)


def test_a_tampered_entry_fails_closed() -> None:
    key = secrets.token_bytes(32)
    a = derive(secrets.token_bytes(16))
    path = shard_path(RID, shard_of(a.identifier))
    doc = json.loads(keyslot_files(key, RID, [Active(a.identifier, a.kek, "2027-01-01")], [])[path])
    k, m = doc["slots"][a.identifier]
    flipped = m[:20] + ("A" if m[20] != "A" else "B") + m[21:]
    with pytest.raises(ValueError):
        open_entry({**doc, "slots": {a.identifier: [k, flipped]}}, a.identifier, a.kek)
    # an entry moved to another release's file fails (the release id is associated data)
    with pytest.raises(ValueError):
        open_entry({**doc, "release": "fedcba9876543210"}, a.identifier, a.kek)
