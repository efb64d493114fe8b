"""A release: the fresh 256-bit content key of one build, fragment encryption and keyslot wrapping.

Each premium fragment is sealed with AES-256-GCM under the release key. Nonces are a 96-bit counter
per release: the key is new for every build, so a counter can never repeat a (key, nonce) pair, which
random nonces only make unlikely. The associated data is the page's URL path and the section index,
so a fragment moved to another page (or another slot of the same page) fails authentication.
"""

from __future__ import annotations

import base64
import secrets
import threading
from dataclasses import dataclass, field

from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.keywrap import InvalidUnwrap, aes_key_unwrap, aes_key_wrap

KEY_BYTES = 32
NONCE_BYTES = 12
FORMAT = 1


def b64(data: bytes) -> str:
    """Standard base64 text (what the browser's ``atob`` reads)."""
    return base64.b64encode(data).decode("ascii")


def unb64(text: str) -> bytes:
    """Inverse of :func:`b64`, strict about the alphabet."""
    return base64.b64decode(text, validate=True)


def aad(page_path: str, section: str) -> bytes:
    """Associated data binding a fragment to its page and its place on the page."""
    return f"qbank/v{FORMAT}|{page_path}|{section}".encode()


@dataclass
class Release:
    """One build's content key and its nonce counter; never written to disk, only wrapped."""

    key: bytes
    release_id: str
    _counter: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @classmethod
    def new(cls) -> Release:
        """A release with a fresh random key."""
        return cls(secrets.token_bytes(KEY_BYTES), secrets.token_hex(8))

    def __repr__(self) -> str:
        return f"Release(release_id={self.release_id!r}, key=<hidden>)"

    def next_nonce(self) -> bytes:
        """The next unused 96-bit nonce of this release."""
        with self._lock:
            self._counter += 1
            n = self._counter
        if n >= 1 << (8 * NONCE_BYTES):  # unreachable in practice; stated so the bound is explicit
            raise OverflowError("nonce space of this release exhausted")
        return n.to_bytes(NONCE_BYTES, "big")

    def seal(self, plaintext: str, page_path: str, section: str) -> tuple[bytes, bytes]:
        """Encrypt one fragment: ``(nonce, ciphertext with tag)``."""
        nonce = self.next_nonce()
        return nonce, AESGCM(self.key).encrypt(nonce, plaintext.encode(), aad(page_path, section))


def open_fragment(key: bytes, nonce: bytes, ciphertext: bytes, page_path: str, section: str) -> str:
    """Decrypt one fragment; raises ``cryptography.exceptions.InvalidTag`` when anything does not match."""
    return AESGCM(key).decrypt(nonce, ciphertext, aad(page_path, section)).decode()


def wrap(kek: bytes, release_key: bytes) -> bytes:
    """Wrap the release key under a license's key-encryption key (AES-KW, RFC 3394: 40 bytes)."""
    return aes_key_wrap(kek, release_key)


def unwrap(kek: bytes, wrapped: bytes) -> bytes | None:
    """The release key of a slot, or None when this key-encryption key does not open it."""
    try:
        return aes_key_unwrap(kek, wrapped)
    except InvalidUnwrap:
        return None
