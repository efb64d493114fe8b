"""License keys against an independent oracle: the standard library's RFC 4648 base32 mapped onto Crockford's
alphabet, SHA-256 for the checksum and HKDF written out from RFC 5869 with hmac. The constants are the ones the
browser's paywall.js uses (checksum tag, HKDF salt and infos), written here, so the two sides cannot drift."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from qbank.paywall.keys import derive, format_key, parse_key

RFC4648 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
SECRETS = [bytes(range(16)), bytes(16), b"\xff" * 16, bytes.fromhex("8f3a0c11d2e9b7460a5c3e1f99d00b7e")]


def oracle_key(secret: bytes) -> str:
    check = hashlib.sha256(b"qbank/license/v1/check" + secret).digest()[:4]
    body = base64.b32encode(secret + check).decode().translate(str.maketrans(RFC4648, CROCKFORD))
    assert len(body) == 32 and "=" not in body  # 20 bytes: 32 characters, no padding
    return "QB-" + "-".join(body[i : i + 4] for i in range(0, 32, 4))


def oracle_hkdf(ikm: bytes, info: bytes, length: int) -> bytes:
    prk = hmac.new(b"qbank/license/v1", ikm, "sha256").digest()
    okm, block, i = b"", b"", 1
    while len(okm) < length:
        block = hmac.new(prk, block + info + bytes([i]), "sha256").digest()
        okm, i = okm + block, i + 1
    return okm[:length]


@pytest.mark.parametrize("secret", SECRETS, ids=lambda s: s.hex()[:8])
def test_the_printed_key_is_the_oracles(secret: bytes) -> None:
    assert format_key(secret) == oracle_key(secret)
    assert parse_key(oracle_key(secret)) == secret


@pytest.mark.parametrize("secret", SECRETS, ids=lambda s: s.hex()[:8])
def test_identifier_and_kek_are_the_oracles(secret: bytes) -> None:
    d = derive(secret)
    assert d.identifier == oracle_hkdf(secret, b"qbank/id", 16).hex()
    assert d.kek == oracle_hkdf(secret, b"qbank/kek", 32)


def test_a_key_without_its_prefix_or_with_stray_case_and_spaces() -> None:
    key = oracle_key(SECRETS[3])
    assert parse_key(key[3:]) == SECRETS[3]  # without QB-
    assert parse_key(" " + key.lower() + "\n") == SECRETS[3]
