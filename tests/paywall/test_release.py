"""A release's fragment format against the standard it claims: AES-256-GCM opened here with the library directly,
the associated data and the 96-bit big-endian nonce counter written out by hand."""

from __future__ import annotations

import base64
import binascii

import pytest
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from qbank.paywall.release import Release, b64, open_fragment, unb64, unwrap, wrap

KEY = bytes(range(32))


def test_fragments_are_aes_gcm_under_the_page_and_section_with_counter_nonces() -> None:
    release = Release(KEY, "r1")
    n1, c1 = release.seal("first fragment", "/questions/a/", "0")
    n2, c2 = release.seal("second", "/questions/a/", "1")
    assert (n1, n2) == (bytes(11) + b"\x01", bytes(11) + b"\x02")
    assert AESGCM(KEY).decrypt(n1, c1, b"qbank/v1|/questions/a/|0") == b"first fragment"
    assert AESGCM(KEY).decrypt(n2, c2, b"qbank/v1|/questions/a/|1") == b"second"
    assert len(c2) == len(b"second") + 16  # the 128-bit tag
    assert open_fragment(KEY, n1, c1, "/questions/a/", "0") == "first fragment"
    with pytest.raises(InvalidTag):
        open_fragment(KEY, n1, c1, "/questions/a/", "1")


def test_the_nonce_counter_stops_at_the_end_of_its_96_bits() -> None:
    release = Release(KEY, "r1", _counter=2**96 - 2)
    assert release.next_nonce() == b"\xff" * 12
    with pytest.raises(OverflowError):
        release.next_nonce()


def test_a_new_release_has_a_fresh_256_bit_key_never_shown() -> None:
    a, b = Release.new(), Release.new()
    assert len(a.key) == 32 and a.key != b.key and a.release_id != b.release_id and len(a.release_id) == 16
    assert a.key.hex() not in repr(a) and "hidden" in repr(a)


def test_base64_is_the_standard_alphabet_and_strict() -> None:
    data = bytes(range(250, 256)) + b"\x00\x3e\x3f"
    assert b64(data) == base64.standard_b64encode(data).decode() and "+" in b64(b"\xfb\xef") and "/" in b64(b"\xff")
    assert unb64(b64(data)) == data
    with pytest.raises(binascii.Error):
        unb64("-_-_")  # the URL-safe alphabet is refused


def test_slot_wrapping_is_rfc3394_and_a_wrong_kek_opens_nothing() -> None:
    # RFC 3394 section 4.6: 256 bits of key data wrapped with a 256-bit KEK
    kek = bytes.fromhex("000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F")
    key = bytes.fromhex("00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F")
    wrapped = bytes.fromhex("28C9F404C4B810F4CBCCB35CFB87F8263F5786E2D80ED326CBC7F0E71A99F43BFB988B9B7A02DD21")
    assert wrap(kek, key) == wrapped
    assert unwrap(kek, wrapped) == key
    assert unwrap(bytes(32), wrapped) is None
    assert unwrap(kek, bytes([wrapped[0] ^ 1]) + wrapped[1:]) is None
