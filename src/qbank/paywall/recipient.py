"""The release key's journey from the build to the deploy job: sealed to the deploy environment's X25519 key.

The build knows only the recipient's *public* key (committed, ``paywall/release-recipient.pub``); the deploy
environment alone holds the private half (the "release identity", secret ``QBANK_RELEASE_IDENTITY``). A
sealed release is an ECIES-style box (the construction of HPKE's base mode, RFC 9180, spelled out):

- a fresh ephemeral X25519 key pair per seal; the shared secret is X25519(ephemeral, recipient);
- the box key is HKDF-SHA-256 over that secret, salted with ``ephemeral public || recipient public`` (so a
  box is bound to both ends) and labelled with :data:`INFO`;
- AES-256-GCM seals the 32-byte release key with associated data naming the format version, the release
  id and the site URL: a box moved to another release or site, or edited in any field, fails to open.

A box key is used once, so its nonce may be random. The file holds no secret a reader without the
identity could use, yet it is never published: it goes to the private prefix only.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

FORMAT = "qbank-sealed-release/1"
INFO = b"qbank/release-seal/v1"
RAW = serialization.Encoding.Raw, serialization.PublicFormat.Raw
ENV_IDENTITY = "QBANK_RELEASE_IDENTITY"
ENV_IDENTITY_FILE = "QBANK_RELEASE_IDENTITY_FILE"
ENV_RECIPIENT = "QBANK_RELEASE_RECIPIENT"


class SealError(ValueError):
    """A sealed release, key or key file that cannot be used; the message says which and why."""


@dataclass(frozen=True)
class SealedRelease:
    """What a sealed-release file names in the clear (the key itself stays inside the box)."""

    release_id: str
    site_url: str
    recipient: bytes
    ephemeral: bytes
    nonce: bytes
    box: bytes

    def to_json(self) -> bytes:
        """The file's bytes (sorted keys, one line)."""
        doc = {
            "format": FORMAT,
            "release": self.release_id,
            "site_url": self.site_url,
            "recipient": _b64(self.recipient),
            "ephemeral": _b64(self.ephemeral),
            "nonce": _b64(self.nonce),
            "box": _b64(self.box),
        }
        return (json.dumps(doc, sort_keys=True) + "\n").encode()

    @classmethod
    def from_json(cls, data: bytes) -> SealedRelease:
        """Parse a sealed-release file; raises SealError on anything malformed."""
        try:
            doc: Any = json.loads(data)
            if not isinstance(doc, dict) or doc.get("format") != FORMAT:
                raise SealError(f"not a sealed release (format {doc.get('format') if isinstance(doc, dict) else '?'})")
            return cls(
                str(doc["release"]),
                str(doc["site_url"]),
                _unb64(doc["recipient"], 32),
                _unb64(doc["ephemeral"], 32),
                _unb64(doc["nonce"], 12),
                _unb64(doc["box"], 32 + 16),
            )
        except (ValueError, KeyError, TypeError) as exc:
            if isinstance(exc, SealError):
                raise
            raise SealError(f"malformed sealed release: {exc}") from exc


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: object, length: int) -> bytes:
    if not isinstance(text, str):
        raise SealError("a field that should be base64 text is not")
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError as exc:
        raise SealError(f"bad base64: {exc}") from exc
    if len(raw) != length:
        raise SealError(f"a field has {len(raw)} bytes, not {length}")
    return raw


def associated_data(release_id: str, site_url: str) -> bytes:
    """What a box is bound to: format version, release id, site URL."""
    return f"{FORMAT}|{release_id}|{site_url}".encode()


def _box_key(shared: bytes, ephemeral: bytes, recipient: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=ephemeral + recipient, info=INFO).derive(shared)


def seal(release_key: bytes, release_id: str, site_url: str, recipient: X25519PublicKey) -> SealedRelease:
    """Seal a release key to the recipient's public key."""
    eph = X25519PrivateKey.generate()
    eph_pub = eph.public_key().public_bytes(*RAW)
    rcpt = recipient.public_bytes(*RAW)
    key = _box_key(eph.exchange(recipient), eph_pub, rcpt)
    nonce = secrets.token_bytes(12)
    box = AESGCM(key).encrypt(nonce, release_key, associated_data(release_id, site_url))
    return SealedRelease(release_id, site_url, rcpt, eph_pub, nonce, box)


def unseal(sealed: SealedRelease, identity: X25519PrivateKey) -> bytes:
    """The release key of a box; raises SealError for another identity or any altered field."""
    mine = identity.public_key().public_bytes(*RAW)
    if mine != sealed.recipient:
        raise SealError("this release was sealed to another key than the release identity given")
    try:
        peer = X25519PublicKey.from_public_bytes(sealed.ephemeral)
        key = _box_key(identity.exchange(peer), sealed.ephemeral, mine)
        return AESGCM(key).decrypt(sealed.nonce, sealed.box, associated_data(sealed.release_id, sealed.site_url))
    except (InvalidTag, ValueError) as exc:
        raise SealError("the sealed release fails authentication (altered, or for another release or site)") from exc


# ---- keys: files and environment ----


def public_key_text(public: X25519PublicKey) -> str:
    """A public key as PEM (SubjectPublicKeyInfo), the form committed to the repository."""
    return public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def load_public(text: str, where: str) -> X25519PublicKey:
    """A recipient from PEM or base64 of the raw 32 bytes."""
    body = text.strip()
    try:
        if body.startswith("-----BEGIN"):
            key = serialization.load_pem_public_key(body.encode())
            if not isinstance(key, X25519PublicKey):
                raise SealError(f"{where}: not an X25519 public key")
            return key
        return X25519PublicKey.from_public_bytes(_unb64(body, 32))
    except (ValueError, TypeError) as exc:
        if isinstance(exc, SealError):
            raise
        raise SealError(f"{where}: not an X25519 public key (PEM or base64 of 32 bytes): {exc}") from exc


def load_identity_text(text: str, where: str) -> X25519PrivateKey:
    """A release identity from PEM (PKCS#8) or base64 of the raw 32 bytes. The key is never echoed."""
    body = text.strip()
    try:
        if body.startswith("-----BEGIN"):
            key = serialization.load_pem_private_key(body.encode(), password=None)
            if not isinstance(key, X25519PrivateKey):
                raise SealError(f"{where}: not an X25519 private key")
            return key
        return X25519PrivateKey.from_private_bytes(_unb64(body, 32))
    except (ValueError, TypeError) as exc:
        if isinstance(exc, SealError):
            raise
        raise SealError(f"{where}: not an X25519 private key (PEM or base64 of 32 bytes)") from None


def identity_from_env(environ: dict[str, str] | None = None) -> X25519PrivateKey:
    """The deploy environment's identity: ``$QBANK_RELEASE_IDENTITY`` (base64) or ``$QBANK_RELEASE_IDENTITY_FILE``."""
    env = dict(os.environ if environ is None else environ)
    if env.get(ENV_IDENTITY):
        return load_identity_text(env[ENV_IDENTITY], f"${ENV_IDENTITY}")
    if env.get(ENV_IDENTITY_FILE):
        path = Path(env[ENV_IDENTITY_FILE]).expanduser()
        try:
            text = path.read_text("ascii")
        except (OSError, UnicodeDecodeError) as exc:
            raise SealError(f"${ENV_IDENTITY_FILE}: cannot read {path}: {type(exc).__name__}") from None
        return load_identity_text(text, str(path))
    raise SealError(f"no release identity: set ${ENV_IDENTITY} (base64) or ${ENV_IDENTITY_FILE} (a key file)")


def keygen(out: Path) -> tuple[Path, Path, str]:
    """Write a new identity to ``out`` (mode 0600, PEM) and its public key to ``out.pub``; refuse to overwrite.

    Returns the two paths and the public key's PEM text.
    """
    pub_path = out.with_name(out.name + ".pub")
    for p in (out, pub_path):
        if p.exists() or p.is_symlink():
            raise SealError(f"{p} exists; refusing to overwrite a key")
    key = X25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    out.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(pem)
    public = public_key_text(key.public_key())
    fd = os.open(pub_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    with os.fdopen(fd, "w") as fh:
        fh.write(public)
    return out, pub_path, public
