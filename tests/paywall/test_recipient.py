"""The sealed release: X25519 + HKDF + AES-GCM round trip, tampering, identities from files and the environment."""

from __future__ import annotations

import base64
import json
import os
import secrets
import stat
from dataclasses import replace
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from qbank.paywall.recipient import (
    SealedRelease,
    SealError,
    identity_from_env,
    keygen,
    load_public,
    seal,
    unseal,
)

URL = "https://qbank.example/"


def test_round_trip_through_the_file() -> None:
    me = X25519PrivateKey.generate()
    key = secrets.token_bytes(32)
    data = seal(key, "00aa11bb22cc33dd", URL, me.public_key()).to_json()
    assert key.hex().encode() not in data and base64.b64encode(key) not in data
    back = SealedRelease.from_json(data)
    assert (back.release_id, back.site_url) == ("00aa11bb22cc33dd", URL)
    assert unseal(back, me) == key
    # each seal is a fresh ephemeral key: the same release key seals to different bytes
    assert seal(key, "00aa11bb22cc33dd", URL, me.public_key()).to_json() != data


def test_wrong_identity_and_every_altered_field_fail() -> None:
    me, other = X25519PrivateKey.generate(), X25519PrivateKey.generate()
    sealed = seal(secrets.token_bytes(32), "00aa11bb22cc33dd", URL, me.public_key())
    with pytest.raises(SealError, match="another key"):
        unseal(sealed, other)
    raw = other.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    with pytest.raises(SealError, match="authentication"):  # claims the other recipient: the box still fails
        unseal(replace(sealed, recipient=raw), other)
    for field, value in [
        ("release_id", "ffaa11bb22cc33dd"),  # associated data: another release
        ("site_url", "https://evil.example/"),  # associated data: another site
        ("nonce", bytes(12)),
        ("box", bytes([sealed.box[0] ^ 1]) + sealed.box[1:]),
        ("ephemeral", X25519PrivateKey.generate().public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)),
    ]:
        with pytest.raises(SealError, match="authentication"):
            unseal(replace(sealed, **{field: value}), me)


def test_malformed_files_are_refused_cleanly() -> None:
    good = json.loads(seal(bytes(32), "00", URL, X25519PrivateKey.generate().public_key()).to_json())
    for doc in ({}, {**good, "format": "x"}, {**good, "box": "!!"}, {**good, "nonce": "AAAA"}, [1]):
        with pytest.raises(SealError):
            SealedRelease.from_json(json.dumps(doc).encode())
    with pytest.raises(SealError):
        SealedRelease.from_json(b"not json")


def test_keygen_writes_a_private_file_and_refuses_to_overwrite(tmp_path: Path) -> None:
    key, pub, text = keygen(tmp_path / "id" / "release.key")
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert pub.read_text() == text and "PUBLIC KEY" in text and "PRIVATE" not in text
    identity = identity_from_env({"QBANK_RELEASE_IDENTITY_FILE": str(key)})
    sealed = seal(b"k" * 32, "ab", URL, load_public(pub.read_text(), "pub"))
    assert unseal(sealed, identity) == b"k" * 32
    before = key.read_bytes()
    with pytest.raises(SealError, match="refusing to overwrite"):
        keygen(key)
    assert key.read_bytes() == before


def test_identity_from_base64_and_errors_that_do_not_echo_the_key(tmp_path: Path) -> None:
    me = X25519PrivateKey.generate()
    raw = me.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                           serialization.NoEncryption())
    b64 = base64.b64encode(raw).decode()
    got = identity_from_env({"QBANK_RELEASE_IDENTITY": b64})
    assert got.public_key().public_bytes_raw() == me.public_key().public_bytes_raw()
    bad = b64[:-4] + "!!!!"
    with pytest.raises(SealError) as info:
        identity_from_env({"QBANK_RELEASE_IDENTITY": bad})
    assert bad not in str(info.value) and b64[:10] not in str(info.value)
    with pytest.raises(SealError, match="no release identity"):
        identity_from_env({})
    with pytest.raises(SealError, match="cannot read"):
        identity_from_env({"QBANK_RELEASE_IDENTITY_FILE": str(tmp_path / "missing")})
    # a base64 public key works as a recipient too
    pub64 = base64.b64encode(me.public_key().public_bytes_raw()).decode()
    assert load_public(pub64, "x").public_bytes_raw() == me.public_key().public_bytes_raw()
    with pytest.raises(SealError):
        load_public("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", "x")


def test_the_committed_recipient_is_a_public_key_only() -> None:
    repo = Path(__file__).resolve().parents[2]
    text = (repo / "paywall" / "release-recipient.pub").read_text()
    load_public(text, "paywall/release-recipient.pub")
    assert "PRIVATE" not in text
    tracked = os.popen(f"git -C {repo} ls-files").read().split()
    assert not [p for p in tracked if p.endswith((".key", ".sealed.json"))]
