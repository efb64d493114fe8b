"""Keyslot format v2 to the byte, worked out another way than paywall/slots.py: HMAC-SHA-256 written out for the
nonces, status keys and decoys, AES-GCM and RFC 3394 key wrap called directly, the status text spelled out;
the padding's capacity at its block boundary; what an entry that cannot be a slot yields."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import json

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.keywrap import aes_key_wrap

from qbank.paywall.slots import Active, Ended, Status, entry, keyslot_files, open_entry, status_text

KEY = bytes(range(32))
KEK = bytes(range(100, 132))
RID = "0123456789abcdef"
IDENT = "ab" + "12" * 15


def mac(key: bytes, *parts: bytes) -> bytes:
    return hmac.new(key, b"\x00".join(parts), hashlib.sha256).digest()


def sealed(inner: bytes, payload: bytes, identifier: str) -> bytes:
    nonce = bytearray(mac(KEY, b"qbank/slot/v2/nonce", identifier.encode(), payload)[:12])
    nonce[0] |= 0x80
    aad = f"qbank/slot/v2|{RID}|{identifier}".encode()
    return bytes(nonce) + AESGCM(inner).encrypt(bytes(nonce), payload, aad)


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


@pytest.mark.parametrize(
    ("status", "date", "text"),
    [
        ("active", "2027-01-01", b'{"s":"active","until":"2027-01-01"}'),
        ("active", None, b'{"s":"active"}'),  # unsold: no end yet
        ("expired", "2020-07-15", b'{"on":"2020-07-15","s":"expired"}'),
        ("expired", None, b'{"s":"expired"}'),
        ("revoked", "2026-01-01", b'{"s":"revoked"}'),  # a revocation says no date
    ],
)
def test_the_status_text_spelled_out(status: str, date: str | None, text: bytes) -> None:
    assert status_text(status, date) == text + b" " * (64 - len(text))


def test_a_status_text_fills_its_64_bytes_and_no_more() -> None:
    # {"s":""} is 8 bytes around the status: 56 characters fill it exactly, 57 do not fit
    assert status_text("x" * 56, None) == b'{"s":"' + b"x" * 56 + b'"}'
    with pytest.raises(ValueError, match="status too long for a slot"):
        status_text("x" * 57, None)


def test_an_active_entry_wraps_the_release_key_and_seals_its_status() -> None:
    payload = b'{"s":"active","until":"2027-01-01"}'.ljust(64)
    assert entry(KEY, RID, IDENT, KEK, "active", "2027-01-01") == [
        b64(aes_key_wrap(KEK, KEY)),
        b64(sealed(KEY, payload, IDENT)),
    ]


def test_an_ended_entry_wraps_its_status_key_not_the_release_key() -> None:
    status_key = mac(KEY, b"qbank/slot/v2/status-key", IDENT.encode())
    payload = b'{"on":"2020-07-15","s":"expired"}'.ljust(64)
    assert entry(KEY, RID, IDENT, KEK, "expired", "2020-07-15") == [
        b64(aes_key_wrap(KEK, status_key)),
        b64(sealed(status_key, payload, IDENT)),
    ]


def decoy(shard: str, n: int) -> tuple[str, list[str]]:
    """The n-th decoy of a shard: an identifier in the shard and k, m of an entry's lengths, all HMAC streams."""

    def stream(label: str, length: int, *parts: str) -> bytes:
        out, i = b"", 0
        while len(out) < length:
            out += mac(KEY, f"qbank/slot/v2/{label}".encode(), *(p.encode() for p in (*parts, str(i))))
            i += 1
        return out[:length]

    ident = shard + stream("decoy-id", 16, shard, str(n)).hex()[2:]
    return ident, [b64(stream("decoy-k", 40, ident)), b64(stream("decoy-m", 92, ident))]


def test_decoys_are_streams_of_the_release_key() -> None:
    files = keyslot_files(KEY, RID, [Active(IDENT, KEK, None)], [])
    slots = json.loads(files[f"assets/keyslots/{RID}/ab.json"])["slots"]
    expected = dict(decoy("ab", n) for n in range(15))
    assert slots == {**expected, IDENT: entry(KEY, RID, IDENT, KEK, "active", None)}
    other = json.loads(files[f"assets/keyslots/{RID}/00.json"])["slots"]
    assert other == dict(decoy("00", n) for n in range(16))


def crowd(n: int) -> list[Active]:
    """n licenses in shard 00 (identifiers are hex text; only their first two characters pick the shard)."""
    return [Active(f"00{i:030x}", KEK, None) for i in range(n)]


@pytest.mark.parametrize(
    ("fullest", "block", "capacity"), [(16, 16, 16), (17, 16, 32), (1, 1, 1), (3, 2, 4), (4, 2, 4)]
)
def test_every_shard_holds_the_fullest_rounded_up_to_whole_blocks(fullest: int, block: int, capacity: int) -> None:
    files = keyslot_files(KEY, RID, crowd(fullest), [], block=block)
    assert {len(json.loads(b)["slots"]) for b in files.values()} == {capacity}


def test_a_block_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="block must be at least 1"):
        keyslot_files(KEY, RID, [], [], block=0)
    assert {len(json.loads(b)["slots"]) for b in keyslot_files(KEY, RID, [], [], block=1).values()} == {1}


def test_an_ended_license_without_a_key_gets_no_entry() -> None:
    files = keyslot_files(KEY, RID, [], [Ended(IDENT, "revoked", None)])
    shard = json.loads(files[f"assets/keyslots/{RID}/ab.json"])
    assert IDENT not in shard["slots"] and open_entry(shard, IDENT, KEK) is None


@pytest.mark.parametrize("shard", [{}, {"slots": []}, {"slots": "ab"}, {"release": RID, "slots": {"cd": ["", ""]}}])
def test_a_shard_without_the_identifiers_entry_yields_nothing(shard: dict[str, object]) -> None:
    assert open_entry(shard, IDENT, KEK) is None


@pytest.mark.parametrize("bad", [["only k"], "km", [1, 2], ["!!", "!!"]])
def test_an_entry_of_another_shape_does_not_open(bad: object) -> None:
    with pytest.raises(ValueError, match="the keyslot does not open with this key"):
        open_entry({"release": RID, "slots": {IDENT: bad}}, IDENT, KEK)


def test_a_date_that_is_not_text_is_no_date() -> None:
    payload = b'{"s":"active","until":20270101}'.ljust(64)
    shard = {"release": RID, "slots": {IDENT: [b64(aes_key_wrap(KEK, KEY)), b64(sealed(KEY, payload, IDENT))]}}
    assert open_entry(shard, IDENT, KEK) == (Status("active", None), KEY)
    ended = b'{"on":"2020-07-15","s":"expired","until":"2027-01-01"}'.ljust(64)
    shard["slots"] = {IDENT: [b64(aes_key_wrap(KEK, KEY)), b64(sealed(KEY, ended, IDENT))]}
    # an ended status gives its "on" date and no key, even when the key it was wrapped with is the release key
    assert open_entry(shard, IDENT, KEK) == (Status("expired", "2020-07-15"), None)


def test_status_words_are_read_by_value() -> None:
    # a status read from elsewhere (a string built at run time) is the same status as the literal
    active, expired = "".join(["ac", "tive"]), "".join(["ex", "pired"])
    assert status_text(active, "2027-01-01") == status_text("active", "2027-01-01")
    assert status_text(expired, "2020-07-15") == status_text("expired", "2020-07-15")
    assert entry(KEY, RID, IDENT, KEK, active, None) == entry(KEY, RID, IDENT, KEK, "active", None)


def test_every_entrys_nonce_is_the_hmac_with_only_its_top_bit_set() -> None:
    payload = b'{"s":"active"}'.ljust(64)
    for i in range(16):
        ident = f"{i:02x}" + "5a" * 15
        assert entry(KEY, RID, ident, KEK, "active", None)[1] == b64(sealed(KEY, payload, ident))


@pytest.mark.parametrize("text", [b'{"until":"2027-01-01"}', b'{"s":"Active","until":"2027-01-01"}'])
def test_only_the_word_active_yields_the_key_and_its_end(text: bytes) -> None:
    # an entry that opens but does not say "active" (no status, or another spelling) gives neither key nor end
    shard = {"release": RID, "slots": {IDENT: [b64(aes_key_wrap(KEK, KEY)), b64(sealed(KEY, text.ljust(64), IDENT))]}}
    opened = open_entry(shard, IDENT, KEK)
    assert opened is not None and opened[0].date is None and opened[1] is None


def test_a_shard_file_spelled_out() -> None:
    files = keyslot_files(KEY, RID, [Active(IDENT, KEK, None)], [], block=1)
    k, m = b64(aes_key_wrap(KEK, KEY)), b64(sealed(KEY, b'{"s":"active"}'.ljust(64), IDENT))
    assert files[f"assets/keyslots/{RID}/ab.json"] == (
        '{"release":"0123456789abcdef","slots":{"' + IDENT + '":["' + k + '","' + m + '"]},"v":2}'
    ).encode()
    ident, (dk, dm) = decoy("00", 0)
    assert files[f"assets/keyslots/{RID}/00.json"] == (
        '{"release":"0123456789abcdef","slots":{"' + ident + '":["' + dk + '","' + dm + '"]},"v":2}'
    ).encode()


def test_a_shard_past_256_entries_pads_every_shard_to_its_blocks() -> None:
    # counts past the small ints CPython caches: 257 in one shard is 17 blocks of 16
    files = keyslot_files(KEY, RID, crowd(257), [])
    assert {len(json.loads(b)["slots"]) for b in files.values()} == {272}


def test_licenses_and_statuses_are_frozen_values() -> None:
    values = [Active(IDENT, KEK, None), Ended(IDENT, "revoked", None), Status("active", None)]
    assert len(set(values)) == 3 and Active(IDENT, KEK, None) in set(values)
    for value in values:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, dataclasses.fields(value)[0].name, "x")
