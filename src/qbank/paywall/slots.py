"""Keyslot files: per release, 256 shards of padded, indistinguishable, deterministic entries.

Where they live: ``assets/keyslots/<release_id>/<shard>.json``, so a page (which names its release, see
``site.RELEASE_META``) only ever meets the slots of its own release, even from an edge cache.

An entry is ``identifier -> [k, m]``, the same shape for every license the ledger knows:

- ``k`` is AES-KW (RFC 3394) under the license's key-encryption key (KEK) of a 256-bit key ``K``. For a
  license that may read this release (unsold, or sold and within its term) ``K`` is the release key; for an
  ended one (revoked, expired) ``K`` is a per-license *status key* derived from the release key, which opens
  nothing but ``m``. The browser keeps the KEK as a non-extractable ``AES-KW`` CryptoKey with the single
  usage ``unwrapKey``, and unwraps ``K`` as a non-extractable ``AES-GCM`` key: no script ever sees the bytes
  of the KEK or of the release key.
- ``m`` is ``nonce || AES-256-GCM(K, status)`` with associated data naming the slot format, the release and
  the identifier. ``status`` is a fixed-length JSON text, ``{"s": "active", "until": D}`` (``until`` only
  for sold licenses), ``{"s": "expired", "on": D}`` or ``{"s": "revoked"}``, padded with spaces.

Why ended licenses keep an entry: the browser can then tell a reader "revoked" or "expired on D" rather
than "not valid", and the entry's shape says nothing more than an active one (same lengths, opened the
same way; only the holder of the license key finds out which it is, and gets no release key from it).

Padding: every shard holds the same number of entries, the largest real count of any shard rounded up
to a multiple of ``block`` (16 by default); the rest are decoys, an identifier in that shard and ``k``,
``m`` of the same lengths, all pseudorandom from the release key. A shard thus reveals neither how many
keys are sold, unsold or ended, nor any date; the file size moves only in steps of ``block`` entries
per shard, set by the fullest shard.

Determinism: everything is a function of the release key and the license set, so the same release with
the same licenses (and the same day-status) gives byte-identical files and a redeploy uploads nothing.
AES-KW is deterministic; GCM nonces are HMAC(release key, identifier || status)'s first 96 bits with the
top bit set. The key a slot wraps is the epoch key (``qbank.epoch``): premium sections are sealed under
keys derived from it, never under it, so no other use shares its nonce space (the top bit stays set, as
when a build's key sealed fragments with counter nonces, top bit clear, under the same key).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.keywrap import InvalidUnwrap, aes_key_unwrap, aes_key_wrap

from .release import b64, unb64

SLOT_FORMAT = 2
SHARD_CHARS = 2
SHARDS = 16**SHARD_CHARS
SLOT_DIR = "assets/keyslots"
BLOCK = 16
STATUS_BYTES = 64
NONCE_BYTES = 12
WRAPPED_BYTES = 40
SEALED_BYTES = NONCE_BYTES + STATUS_BYTES + 16
ID_HEX = 32


def shard_of(identifier: str) -> str:
    """The shard (a hex prefix) of an identifier."""
    return identifier[:SHARD_CHARS]


def slot_dir(release_id: str) -> str:
    """The folder, under the site, of one release's keyslot files."""
    return f"{SLOT_DIR}/{release_id}"


def shard_path(release_id: str, shard: str) -> str:
    """The site path of one shard file."""
    return f"{slot_dir(release_id)}/{shard}.json"


@dataclass(frozen=True)
class Active:
    """A license that gets a slot: minted and unsold, or sold and within its six months."""

    identifier: str
    kek: bytes
    until: str | None


@dataclass(frozen=True)
class Ended:
    """A license that opens nothing, and why: ``expired`` (with the date) or ``revoked``."""

    identifier: str
    status: str
    on: str | None
    kek: bytes | None = None  # wraps the entry that tells the holder why; without it, no entry


@dataclass(frozen=True)
class Status:
    """What a slot says once opened: ``active`` (with ``until`` when sold), ``expired`` (``on``) or ``revoked``."""

    status: str
    date: str | None


def slot_aad(release_id: str, identifier: str) -> bytes:
    """Associated data of an entry's status: slot format, release, identifier."""
    return f"qbank/slot/v{SLOT_FORMAT}|{release_id}|{identifier}".encode()


def _prf(key: bytes, label: str, *parts: str | bytes) -> bytes:
    msg = b"\x00".join([f"qbank/slot/v{SLOT_FORMAT}/{label}".encode(), *(p.encode() if isinstance(p, str) else p
                                                                          for p in parts)])
    return hmac.new(key, msg, hashlib.sha256).digest()


def _stream(key: bytes, label: str, n: int, *parts: str) -> bytes:
    out = b""
    i = 0
    while len(out) < n:
        out += _prf(key, label, *parts, str(i))
        i += 1
    return out[:n]


def status_text(status: str, date: str | None) -> bytes:
    """The fixed-length plaintext of an entry's status."""
    doc: dict[str, str] = {"s": status}
    if date and status == "active":
        doc["until"] = date
    elif date and status == "expired":
        doc["on"] = date
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
    if len(raw) > STATUS_BYTES:
        raise ValueError(f"status too long for a slot: {raw!r}")
    return raw.ljust(STATUS_BYTES, b" ")


def entry(release_key: bytes, release_id: str, identifier: str, kek: bytes, status: str, date: str | None) -> list[str]:
    """One license's entry ``[k, m]`` (base64)."""
    inner = release_key if status == "active" else _prf(release_key, "status-key", identifier)
    payload = status_text(status, date)
    nonce = bytearray(_prf(release_key, "nonce", identifier, payload)[:NONCE_BYTES])
    nonce[0] |= 0x80  # kept from when fragments used counter nonces (top bit clear) under this key
    sealed = bytes(nonce) + AESGCM(inner).encrypt(bytes(nonce), payload, slot_aad(release_id, identifier))
    return [b64(aes_key_wrap(kek, inner)), b64(sealed)]


def _decoy(release_key: bytes, shard: str, n: int) -> tuple[str, list[str]]:
    ident = shard + _stream(release_key, "decoy-id", ID_HEX // 2, shard, str(n)).hex()[SHARD_CHARS:]
    k = _stream(release_key, "decoy-k", WRAPPED_BYTES, ident)
    m = _stream(release_key, "decoy-m", SEALED_BYTES, ident)
    return ident, [b64(k), b64(m)]


def keyslot_files(
    release_key: bytes,
    release_id: str,
    active: Iterable[Active],
    ended: Iterable[Ended],
    block: int = BLOCK,
) -> dict[str, bytes]:
    """Every shard file of a release, keyed by its path under the site folder."""
    if block < 1:
        raise ValueError("block must be at least 1")
    shards: dict[str, dict[str, list[str]]] = {f"{i:0{SHARD_CHARS}x}": {} for i in range(SHARDS)}
    for a in active:
        shards[shard_of(a.identifier)][a.identifier] = entry(
            release_key, release_id, a.identifier, a.kek, "active", a.until
        )
    for e in ended:
        if e.kek is not None:
            shards[shard_of(e.identifier)][e.identifier] = entry(
                release_key, release_id, e.identifier, e.kek, e.status, e.on
            )
    fullest = max(len(s) for s in shards.values())
    capacity = max(block, -(-fullest // block) * block)
    out: dict[str, bytes] = {}
    for name, slots in shards.items():
        n = 0
        while len(slots) < capacity:
            ident, decoy = _decoy(release_key, name, n)
            n += 1
            slots.setdefault(ident, decoy)
        body = {"v": SLOT_FORMAT, "release": release_id, "slots": dict(sorted(slots.items()))}
        out[shard_path(release_id, name)] = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    return out


def open_entry(shard: dict[str, object], identifier: str, kek: bytes) -> tuple[Status, bytes | None] | None:
    """What a license's entry says, and the release key when it is active; None without an entry.

    Raises ValueError when the entry does not open (a damaged or altered file).
    """
    slots = shard.get("slots")
    if not isinstance(slots, dict) or identifier not in slots:
        return None
    try:
        k, m = slots[identifier]
        inner = aes_key_unwrap(kek, unb64(k))
        raw = unb64(m)
        aad = slot_aad(str(shard["release"]), identifier)
        payload = AESGCM(inner).decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], aad)
        doc = json.loads(payload)
    except (InvalidUnwrap, InvalidTag, ValueError, TypeError) as exc:
        raise ValueError(f"the keyslot does not open with this key: {type(exc).__name__}") from exc
    status = str(doc.get("s"))
    date = doc.get("until") if status == "active" else doc.get("on")
    return Status(status, date if isinstance(date, str) else None), inner if status == "active" else None
