"""License keys against an independent oracle: the standard library's RFC 4648 base32 mapped onto Crockford's
alphabet, SHA-256 for the checksum and HKDF written out from RFC 5869 with hmac. The constants are the ones the
browser's paywall.js uses (checksum tag, HKDF salt and infos), written here, so the two sides cannot drift."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from qbank.paywall.keys import KeyFormatError, derive, format_key, parse_key

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


# a secret whose key body itself starts with "QB" and holds both 0 and 1 (found by searching sha256 digests)
QB_BODY = bytes.fromhex("bae9aa4081f8783457c6886580a4c8a4")


def test_a_body_starting_with_qb_typed_without_the_prefix_is_not_cut() -> None:
    body = oracle_key(QB_BODY)[3:].replace("-", "")
    assert body.startswith("QB") and len(body) == 32
    assert parse_key(body) == QB_BODY


def test_the_letters_read_as_digits() -> None:
    key = oracle_key(QB_BODY)
    assert "0" in key[3:] and "1" in key[3:]
    for one in ("I", "i", "L", "l"):
        assert parse_key(key.replace("0", "O").replace("1", one)) == QB_BODY


def test_the_shard_is_the_identifiers_first_two_hex_characters() -> None:
    d = derive(QB_BODY)
    assert d.shard == oracle_hkdf(QB_BODY, b"qbank/id", 16).hex()[:2]


def test_only_a_16_byte_secret_is_formatted() -> None:
    for n in (15, 17):
        with pytest.raises(ValueError, match=f"a license secret has 16 bytes, not {n}"):
            format_key(bytes(n))


@pytest.mark.parametrize("n", [31, 33])
def test_a_key_one_character_short_or_long_is_a_length_error(n: int) -> None:
    body = oracle_key(SECRETS[3])[3:].replace("-", "")
    assert not body.startswith("QB")
    text = body[:31] if n == 31 else body + "A"  # typed without the prefix
    with pytest.raises(KeyFormatError) as exc:
        parse_key(text)
    assert exc.value.reason == "length"
    assert str(exc.value) == f"a license key has 32 characters after 'QB-', this one {n}"


# What a too-short or too-long key is reported as: the characters after the prefix, counted by hand. A leading
# QB is the prefix when its dash follows, or when the dashless text is not 32 characters (a key body's length).
QB3 = oracle_key(SECRETS[3])  # QB-HWX0-...: a body that does not start with QB
QBQB = oracle_key(QB_BODY)  # QB-QB..-...: a body that does start with QB


@pytest.mark.parametrize(
    ("text", "count"),
    [
        (QB3 + "A", 33),  # printed, one too many: the prefix is not counted
        (QB3 + "-AB", 34),
        (QB3[:-1], 31),  # printed, one too few
        (QB3[:-2], 30),  # QB- and 30 characters: 32 without the dash, but the dash marks the prefix
        (QBQB[:-2], 30),
        ("QB" + QB3[3:].replace("-", "") + "A", 33),  # the prefix typed without its dash
        ("QB" + QB3[3:].replace("-", "")[:29], 29),
        ("qb-" + QB3[3:].lower() + "a", 33),  # in lower case
        (" QB - " + QB3[3:] + "A", 33),  # spaces between the prefix and its dash
        ("QB-", 0),
    ],
)
def test_a_length_error_counts_the_characters_after_the_prefix(text: str, count: int) -> None:
    with pytest.raises(KeyFormatError) as exc:
        parse_key(text)
    assert exc.value.reason == "length"
    assert str(exc.value) == f"a license key has 32 characters after 'QB-', this one {count}"


def test_a_key_body_starting_with_qb_typed_wrong_is_read_as_prefixed() -> None:
    # The one case the rule cannot tell apart: 31 or 33 characters starting with QB, typed without a prefix,
    # read as the prefix and 29 or 31 (a body starts with QB once in 1024 keys; a typed prefix is far likelier).
    body = QBQB[3:].replace("-", "")
    for text, count in ((body[:31], 29), (body + "A", 31)):
        with pytest.raises(KeyFormatError) as exc:
            parse_key(text)
        assert str(exc.value) == f"a license key has 32 characters after 'QB-', this one {count}"
