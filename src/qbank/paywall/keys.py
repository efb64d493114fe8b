"""License keys: a random 128-bit secret shown as grouped base32 with a checksum, and what it derives.

Format: ``QB-`` then 32 Crockford base32 characters in groups of four. The 20 encoded bytes are the
16-byte secret followed by a 4-byte checksum (the first bytes of SHA-256 over a domain tag and the
secret), so a typo is caught on the device before any request is made (a random typo passes with
probability 2^-32). Crockford's alphabet has no I, L, O or U; decoding maps I/L to 1 and O to 0 and
ignores case, dashes and spaces, since buyers copy keys out of emails.

Why HKDF and no password hashing: password hashes (Argon2, scrypt, PBKDF2) exist to make each guess
of a *low-entropy* secret expensive. A license secret is 128 uniformly random bits; an attacker must
try 2^127 keys on average, which no slowdown factor makes easier or harder in any way that matters,
while a slow hash would only cost every honest reader time on every device. RFC 5869 HKDF is the
right tool for uniformly random input keying material: it splits one secret into independent keys
(an identifier and a key-encryption key) so that publishing the identifier reveals nothing about
the key-encryption key.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # Crockford base32
_DECODE = {c: i for i, c in enumerate(ALPHABET)} | {"O": 0, "I": 1, "L": 1}
PREFIX = "QB"
SECRET_BYTES = 16
CHECK_BYTES = 4
KEY_CHARS = (SECRET_BYTES + CHECK_BYTES) * 8 // 5  # 32
GROUP = 4
CHECK_TAG = b"qbank/license/v1/check"
HKDF_SALT = b"qbank/license/v1"
INFO_ID = b"qbank/id"
INFO_KEK = b"qbank/kek"
ID_BYTES = 16


class KeyFormatError(ValueError):
    """A string that is not a well-formed license key (bad characters, length or checksum)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def b32encode(data: bytes) -> str:
    """Crockford base32 of ``data`` (length a multiple of 5 bytes), without padding."""
    bits = int.from_bytes(data, "big")
    n = len(data) * 8 // 5
    return "".join(ALPHABET[(bits >> (5 * (n - 1 - i))) & 31] for i in range(n))


def b32decode(text: str) -> bytes:
    """Inverse of :func:`b32encode`; raises KeyError on a character outside the alphabet."""
    bits = 0
    for ch in text:
        bits = (bits << 5) | _DECODE[ch]
    return bits.to_bytes(len(text) * 5 // 8, "big")


def checksum(secret: bytes) -> bytes:
    """The 4-byte checksum appended to a secret."""
    return hashlib.sha256(CHECK_TAG + secret).digest()[:CHECK_BYTES]


def format_key(secret: bytes) -> str:
    """The printable key ``QB-XXXX-...`` of a 16-byte secret."""
    if len(secret) != SECRET_BYTES:
        raise ValueError(f"a license secret has {SECRET_BYTES} bytes, not {len(secret)}")
    body = b32encode(secret + checksum(secret))
    return "-".join([PREFIX, *(body[i : i + GROUP] for i in range(0, len(body), GROUP))])


def parse_key(text: str) -> bytes:
    """The secret of a printed key; raises KeyFormatError saying what is wrong with it.

    A leading ``QB`` is the prefix when a dash follows it (as printed), or when what was typed, without
    dashes and spaces, is not 32 characters long: 32 characters are a key body, which may itself start with
    QB. A length error counts the characters after the prefix.
    """
    typed = "".join(text.split()).upper()
    s = typed.replace("-", "")
    if s.startswith(PREFIX) and (typed.startswith(PREFIX + "-") or len(s) != KEY_CHARS):
        s = s[len(PREFIX) :]
    bad = sorted({c for c in s if c not in _DECODE})
    if bad:
        raise KeyFormatError("chars", f"a license key has no {' '.join(repr(c) for c in bad)} in it")
    if len(s) != KEY_CHARS:
        raise KeyFormatError("length", f"a license key has {KEY_CHARS} characters after 'QB-', this one {len(s)}")
    raw = b32decode(s)
    secret, check = raw[:SECRET_BYTES], raw[SECRET_BYTES:]
    if checksum(secret) != check:
        raise KeyFormatError("checksum", "the key's checksum does not match: a character is mistyped")
    return secret


def generate_secret() -> bytes:
    """A fresh 128-bit secret from the operating system's CSPRNG."""
    return secrets.token_bytes(SECRET_BYTES)


def hkdf(ikm: bytes, info: bytes, length: int, salt: bytes = HKDF_SALT) -> bytes:
    """HKDF-SHA-256 (RFC 5869) extract-then-expand."""
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=salt, info=info).derive(ikm)


@dataclass(frozen=True)
class Derived:
    """What a license secret derives: a public identifier and a secret key-encryption key."""

    identifier: str
    kek: bytes

    @property
    def shard(self) -> str:
        """The keyslot file this license's slot lives in (see ``slots.SHARD_CHARS``)."""
        from .slots import shard_of

        return shard_of(self.identifier)


def derive(secret: bytes) -> Derived:
    """Derive the identifier (hex) and the 256-bit key-encryption key of a license secret."""
    return Derived(hkdf(secret, INFO_ID, ID_BYTES).hex(), hkdf(secret, INFO_KEK, 32))
