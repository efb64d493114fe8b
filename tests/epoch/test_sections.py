"""Section keys and nonces under an epoch: stable for equal text, never shared by different texts."""

from __future__ import annotations

import hashlib
import hmac
import secrets

import pytest
from cryptography.exceptions import InvalidTag

from qbank.epoch.sections import SealedSection, open_section, seal_section, section_key, section_nonce

E = secrets.token_bytes(32)
P = "/questions/kv/"


def test_equal_text_gives_equal_bytes_and_it_opens() -> None:
    a, b = seal_section(E, P, "0", "<p>text</p>"), seal_section(E, P, "0", "<p>text</p>")
    assert a == b
    assert open_section(E, P, "0", a) == "<p>text</p>"


def test_an_edit_gets_another_key_and_nonce_and_another_epoch_another_digest() -> None:
    a, b = seal_section(E, P, "0", "<p>52 GB</p>"), seal_section(E, P, "0", "<p>53 GB</p>")
    assert a.d != b.d and a.nonce != b.nonce
    assert section_key(E, P, "0", a.d) != section_key(E, P, "0", b.d)
    other = secrets.token_bytes(32)
    assert seal_section(other, P, "0", "<p>52 GB</p>").d != a.d  # the digest links nothing across epochs
    assert section_nonce(E, P, "1", a.d) != a.nonce


@pytest.mark.parametrize("where", ["page", "section", "digest", "epoch"])
def test_a_section_moved_or_relabelled_does_not_open(where: str) -> None:
    a = seal_section(E, P, "0", "<p>text</p>")
    with pytest.raises(InvalidTag):
        if where == "page":
            open_section(E, "/questions/other/", "0", a)
        elif where == "section":
            open_section(E, P, "1", a)
        elif where == "digest":
            open_section(E, P, "0", SealedSection("0" * 32, a.nonce, a.ciphertext))
        else:
            open_section(secrets.token_bytes(32), P, "0", a)


@pytest.mark.parametrize(("sealed_as", "opened_as"), [
    (("/a|0", "x"), ("/a", "0|x")),  # '|' joins the key's info and the AAD: two tuples, one string
    (("/a", "0|x"), ("/a|0", "x")),
    (("/a\x00b", "0"), ("/a", "b\x000")),  # NUL joins the digest's input
])
def test_an_ambiguous_page_or_section_name_is_refused_not_confused(
    sealed_as: tuple[str, str], opened_as: tuple[str, str]
) -> None:
    """A section sealed for one (page, section) must never open as another: names that would make the
    concatenations ambiguous are refused when sealing and when opening."""
    try:
        a = seal_section(E, *sealed_as, "<p>text</p>")
    except ValueError:
        a = seal_section(E, "/q/", "0", "<p>text</p>")  # refused; still check the opening side refuses too
    with pytest.raises((ValueError, InvalidTag)):
        open_section(E, *opened_as, a)
    with pytest.raises(ValueError):
        seal_section(E, *sealed_as, "<p>text</p>")


def test_a_non_reader_cannot_confirm_a_guess_of_a_section_from_its_digest() -> None:
    """Everything public about a short section (its digest, nonce, ciphertext, page, number, length) and a
    correct guess of its text: no computation without E reproduces the digest or opens the ciphertext."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    from qbank.epoch.sections import SALT, digest

    text = "<p>52 GB</p>"
    sealed = seal_section(E, P, "0", text)
    joined = [sep.join([P, "0", text]).encode() for sep in ("|", "\x00", "")]
    public_keys = [b"", b"\x00" * 32, SALT] + [
        HKDF(algorithm=hashes.SHA256(), length=32, salt=SALT, info=info).derive(ikm)
        for ikm in (b"", b"\x00" * 32) for info in (b"qbank/digest", b"digest")
    ]
    candidates = {hashlib.sha256(m).hexdigest()[:32] for m in joined} | {
        hmac.new(k, m, hashlib.sha256).hexdigest()[:32] for k in public_keys for m in joined
    } | {digest(k, P, "0", text) for k in public_keys}
    assert sealed.d not in candidates
    # and the same text under another epoch, or on another page, has an unrelated digest: nothing links
    elsewhere = {seal_section(secrets.token_bytes(32), P, "0", text).d, seal_section(E, "/q/", "0", text).d}
    assert len(elsewhere | {sealed.d}) == 3
