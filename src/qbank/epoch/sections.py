"""A premium section under an epoch key: derived content key, deterministic nonce, stable bytes. Pure.

Hierarchy (``docs/security.md``, "Epochs"): the epoch key ``E`` (256 bits, random, one per epoch) is what a
reader's keyslot wraps. Each section's content key is derived from it, never stored:

- ``d  = HMAC-SHA-256(HKDF(E, "digest"), page || section || plaintext)[:16]``: the section's digest, a
  keyed fingerprint published next to its ciphertext. Without ``E`` it says nothing about the text, not
  even whether two epochs hold the same one (another ``E``, another ``d``).
- ``CK = HKDF-SHA-256(E, info = page || section || d)``: one key per (epoch, page, section, plaintext).
- ``nonce = HMAC-SHA-256(HKDF(E, "nonce"), page || section || d)[:12]``.
- ``c  = AES-256-GCM(CK, nonce, plaintext, aad = "qbank/v2|page|section|d")``.

Nonce safety, argued: ``CK`` is a function of ``d``, so a content key only ever encrypts plaintexts with
the same digest; two different plaintexts of one (page, section) share a digest only on a collision of a
128-bit PRF output (probability at most q^2 / 2^129 for q versions of that section in one epoch, which
is 2^-89 at q = 2^20). So apart from that bound no key encrypts two different plaintexts, under any
nonce, and re-encrypting the same plaintext gives the same (key, nonce, plaintext) and thus the same bytes:
GCM's one failure mode (a repeated nonce under one key with different messages) has no way to occur. The
nonce is derived rather than fixed only so that equal keys would still need equal digests to repeat it.
The epoch key itself also opens keyslot statuses (``paywall.slots``) as an AES-GCM key; sections never
use ``E`` as a cipher key, only as HKDF input, so those two uses never share a (key, nonce) space.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

FORMAT = 2
SALT = b"qbank/epoch/v1"
DIGEST_BYTES = 16
NONCE_BYTES = 12
SECTION_RE = re.compile(r"[0-9]{1,6}")
SEPARATORS = ("|", "\x00")


def check_names(page_path: str, section: str) -> None:
    """Refuse names that would make the joined inputs ambiguous (a ``ValueError``).

    ``|`` joins the key's info and the AAD, NUL the digest's input: with either inside a name, two different
    (page, section) pairs give one string, and a section sealed for one would open as the other. Sections are
    the build's region numbers; pages are URL paths, which never need either character.
    """
    if not SECTION_RE.fullmatch(section):
        raise ValueError(f"section {section!r} is not a region number")
    if not page_path.startswith("/") or any(c in page_path for c in SEPARATORS):
        raise ValueError(f"page path {page_path!r} must start with '/' and hold no '|' or NUL")


def _hkdf(ikm: bytes, info: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=SALT, info=info).derive(ikm)


def _msg(page_path: str, section: str, tail: bytes) -> bytes:
    return b"\x00".join([page_path.encode(), section.encode(), tail])


def digest(epoch_key: bytes, page_path: str, section: str, plaintext: str) -> str:
    """The section's keyed digest (hex): equal for equal text in one epoch, meaningless without the key."""
    mac = hmac.new(_hkdf(epoch_key, b"qbank/digest"), _msg(page_path, section, plaintext.encode()), hashlib.sha256)
    return mac.digest()[:DIGEST_BYTES].hex()


def section_info(page_path: str, section: str, d: str) -> bytes:
    """The HKDF info of a section's content key (the browser builds the same bytes)."""
    return f"qbank/section|{page_path}|{section}|{d}".encode()


def section_key(epoch_key: bytes, page_path: str, section: str, d: str) -> bytes:
    """The content key of one version of one section."""
    return _hkdf(epoch_key, section_info(page_path, section, d))


def section_nonce(epoch_key: bytes, page_path: str, section: str, d: str) -> bytes:
    """The section's nonce (see the module docstring for why it never repeats under one key)."""
    mac = hmac.new(_hkdf(epoch_key, b"qbank/nonce"), _msg(page_path, section, d.encode()), hashlib.sha256)
    return mac.digest()[:NONCE_BYTES]


def section_aad(page_path: str, section: str, d: str) -> bytes:
    """Associated data: the page, the section's place on it and its digest."""
    return f"qbank/v{FORMAT}|{page_path}|{section}|{d}".encode()


@dataclass(frozen=True)
class SealedSection:
    """One section's public record: digest, nonce and ciphertext with tag."""

    d: str
    nonce: bytes
    ciphertext: bytes


def seal_section(epoch_key: bytes, page_path: str, section: str, plaintext: str) -> SealedSection:
    """Encrypt a section under the epoch: the same inputs always give the same bytes."""
    check_names(page_path, section)
    d = digest(epoch_key, page_path, section, plaintext)
    nonce = section_nonce(epoch_key, page_path, section, d)
    ct = AESGCM(section_key(epoch_key, page_path, section, d)).encrypt(
        nonce, plaintext.encode(), section_aad(page_path, section, d)
    )
    return SealedSection(d, nonce, ct)


def open_section(epoch_key: bytes, page_path: str, section: str, sealed: SealedSection) -> str:
    """Decrypt a section; raises ``cryptography.exceptions.InvalidTag`` when anything does not match (a
    ``ValueError`` for names :func:`check_names` refuses)."""
    check_names(page_path, section)
    key = section_key(epoch_key, page_path, section, sealed.d)
    return AESGCM(key).decrypt(sealed.nonce, sealed.ciphertext, section_aad(page_path, section, sealed.d)).decode()
