"""Section keys and nonces under an epoch: stable for equal text, never shared by different texts."""

from __future__ import annotations

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
