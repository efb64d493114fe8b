"""The sealed-release file to the byte and every refusal's message (paywall/recipient.py), worked out another way:
HKDF written out from RFC 5869 with `hmac` and AES-GCM called directly to open a box, the file's JSON spelled
out, each field one byte short, keys of another curve, both identity variables set, a key file's neighbours."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from qbank.paywall.recipient import (
    SealedRelease,
    SealError,
    identity_from_env,
    keygen,
    load_identity_text,
    load_public,
    seal,
    unseal,
)

URL = "https://qbank.example/"
KEY = bytes(range(32))


def raw(public: X25519PublicKey) -> bytes:
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def hkdf_sha256(ikm: bytes, salt: bytes, info: bytes) -> bytes:
    """RFC 5869 for 32 bytes: one block of the expand step."""
    prk = hmac.new(salt, ikm, hashlib.sha256).digest()
    return hmac.new(prk, info + b"\x01", hashlib.sha256).digest()


def test_a_box_opens_by_the_construction_written_out() -> None:
    me = X25519PrivateKey.generate()
    sealed = seal(KEY, "00aa11bb22cc33dd", URL, me.public_key())
    assert sealed.recipient == raw(me.public_key()) and len(sealed.nonce) == 12
    shared = me.exchange(X25519PublicKey.from_public_bytes(sealed.ephemeral))
    box_key = hkdf_sha256(shared, sealed.ephemeral + sealed.recipient, b"qbank/release-seal/v1")
    aad = b"qbank-sealed-release/1|00aa11bb22cc33dd|https://qbank.example/"
    assert AESGCM(box_key).decrypt(sealed.nonce, sealed.box, aad) == KEY


def test_the_file_spelled_out() -> None:
    sealed = SealedRelease("ab12", URL, b"\x01" * 32, b"\x02" * 32, b"\x03" * 12, b"\x04" * 48)

    def b64(n: int, length: int) -> str:
        return base64.b64encode(bytes([n]) * length).decode()

    assert sealed.to_json() == (
        '{"box": "' + b64(4, 48) + '", "ephemeral": "' + b64(2, 32) + '", "format": "qbank-sealed-release/1", '
        '"nonce": "' + b64(3, 12) + '", "recipient": "' + b64(1, 32) + '", "release": "ab12", '
        '"site_url": "https://qbank.example/"}\n'
    ).encode()
    assert SealedRelease.from_json(sealed.to_json()) == sealed


def good() -> dict[str, object]:
    doc: dict[str, object] = json.loads(seal(KEY, "ab12", URL, X25519PrivateKey.generate().public_key()).to_json())
    return doc


@pytest.mark.parametrize(("field", "length"), [("recipient", 32), ("ephemeral", 32), ("nonce", 12), ("box", 48)])
def test_each_field_of_another_length_is_refused(field: str, length: int) -> None:
    for n in (length - 1, length + 1):
        doc = {**good(), field: base64.b64encode(bytes(n)).decode()}
        with pytest.raises(SealError) as caught:
            SealedRelease.from_json(json.dumps(doc).encode())
        assert str(caught.value) == f"a field has {n} bytes, not {length}"


def refusal(doc: object) -> str:
    with pytest.raises(SealError) as caught:
        SealedRelease.from_json(json.dumps(doc).encode())
    return str(caught.value)


def test_a_file_that_is_not_a_sealed_release_says_why() -> None:
    assert refusal({**good(), "format": "qbank-sealed-release/2"}) == (
        "not a sealed release (format qbank-sealed-release/2)"
    )
    assert refusal([1, 2]) == "not a sealed release (format ?)"
    assert refusal({**good(), "nonce": 12}) == "a field that should be base64 text is not"
    assert refusal({**good(), "box": "!!"}).startswith("bad base64: ")
    doc = good()
    del doc["release"]
    assert refusal(doc) == "malformed sealed release: 'release'"


def pem_private(key: X25519PrivateKey | Ed25519PrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


def pem_public(key: X25519PrivateKey | Ed25519PrivateKey) -> str:
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()


def test_keys_of_another_curve_are_refused_by_name() -> None:
    me = X25519PrivateKey.generate()
    assert raw(load_identity_text(pem_private(me), "id").public_key()) == raw(me.public_key())
    assert raw(load_public(pem_public(me), "pub")) == raw(me.public_key())
    ed = Ed25519PrivateKey.generate()
    with pytest.raises(SealError) as caught:
        load_identity_text(pem_private(ed), "id.key")
    assert str(caught.value) == "id.key: not an X25519 private key"
    with pytest.raises(SealError) as caught:
        load_public(pem_public(ed), "r.pub")
    assert str(caught.value) == "r.pub: not an X25519 public key"
    with pytest.raises(SealError) as caught:
        load_identity_text("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "$X")
    assert str(caught.value) == "$X: not an X25519 private key (PEM or base64 of 32 bytes)"
    with pytest.raises(SealError) as caught:
        load_public("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", "r.pub")
    assert str(caught.value).startswith("r.pub: not an X25519 public key (PEM or base64 of 32 bytes): ")


def test_the_identity_variable_comes_before_the_file(tmp_path: Path) -> None:
    me, other = X25519PrivateKey.generate(), X25519PrivateKey.generate()
    (tmp_path / "other.key").write_text(pem_private(other))
    text = base64.b64encode(me.private_bytes_raw()).decode()
    env = {"QBANK_RELEASE_IDENTITY": text, "QBANK_RELEASE_IDENTITY_FILE": str(tmp_path / "other.key")}
    assert raw(identity_from_env(env).public_key()) == raw(me.public_key())
    # an empty variable is not set: the file is read
    assert raw(identity_from_env({**env, "QBANK_RELEASE_IDENTITY": ""}).public_key()) == raw(other.public_key())
    with pytest.raises(SealError) as caught:
        identity_from_env({"QBANK_RELEASE_IDENTITY_FILE": str(tmp_path)})
    assert str(caught.value) == f"$QBANK_RELEASE_IDENTITY_FILE: cannot read {tmp_path}: IsADirectoryError"
    with pytest.raises(SealError) as caught:
        identity_from_env({"QBANK_RELEASE_IDENTITY_FILE": ""})
    assert str(caught.value) == (
        "no release identity: set $QBANK_RELEASE_IDENTITY (base64) or $QBANK_RELEASE_IDENTITY_FILE (a key file)"
    )


def test_keygen_writes_a_readable_public_key_and_refuses_any_file_in_the_way(tmp_path: Path) -> None:
    key, pub, text = keygen(tmp_path / "release.key")
    assert pub == tmp_path / "release.key.pub" and stat.S_IMODE(pub.stat().st_mode) == 0o644
    assert raw(load_identity_text(key.read_text(), "k").public_key()) == raw(load_public(text, "p"))
    # a dangling link where the key would go is refused, and so is a public key file alone
    os.symlink(tmp_path / "nowhere", tmp_path / "linked.key")
    with pytest.raises(SealError) as caught:
        keygen(tmp_path / "linked.key")
    assert str(caught.value) == f"{tmp_path / 'linked.key'} exists; refusing to overwrite a key"
    (tmp_path / "lone.key.pub").write_text("x")
    with pytest.raises(SealError) as caught:
        keygen(tmp_path / "lone.key")
    assert str(caught.value) == f"{tmp_path / 'lone.key.pub'} exists; refusing to overwrite a key"
    assert not (tmp_path / "lone.key").exists() and not (tmp_path / "nowhere").exists()


def test_a_format_sorting_before_this_one_is_refused_too() -> None:
    assert refusal({**good(), "format": "other"}) == "not a sealed release (format other)"


def test_any_other_identity_is_refused_whichever_way_its_key_sorts() -> None:
    me = X25519PrivateKey.generate()
    sealed = seal(KEY, "ab12", URL, me.public_key())
    below = above = None
    while below is None or above is None:
        other = X25519PrivateKey.generate()
        if raw(other.public_key()) < sealed.recipient:
            below = other
        elif raw(other.public_key()) > sealed.recipient:
            above = other
    for other in (below, above):
        with pytest.raises(SealError) as caught:
            unseal(sealed, other)
        assert str(caught.value) == "this release was sealed to another key than the release identity given"


def test_keygen_makes_the_folders_it_needs(tmp_path: Path) -> None:
    key, pub, _ = keygen(tmp_path / "a" / "b" / "release.key")
    assert key.is_file() and pub.is_file()


def test_a_sealed_release_is_a_frozen_value() -> None:
    sealed = SealedRelease("ab12", URL, b"\x01" * 32, b"\x02" * 32, b"\x03" * 12, b"\x04" * 48)
    assert {sealed, SealedRelease.from_json(sealed.to_json())} == {sealed}
    with pytest.raises(AttributeError):  # dataclasses.FrozenInstanceError
        sealed.site_url = "https://evil.example/"  # type: ignore[misc]
