"""Formats: key encoding and checksum, HKDF vectors, keyslot wrapping, AES-GCM with associated data."""

from __future__ import annotations

import json
import re

import pytest
from cryptography.exceptions import InvalidTag
from hypothesis import given
from hypothesis import strategies as st

from qbank.paywall.encrypt import SealedPage, SealError, premium_regions, seal_page
from qbank.paywall.keys import KeyFormatError, b32decode, b32encode, derive, format_key, hkdf, parse_key
from qbank.paywall.release import Release, open_fragment, unb64, unwrap, wrap

SECRET = bytes(range(16))


def test_key_shape_and_round_trip() -> None:
    key = format_key(SECRET)
    assert re.fullmatch(r"QB(-[0-9A-HJKMNP-TV-Z]{4}){8}", key), key
    assert parse_key(key) == SECRET
    # what a buyer types: lower case, no dashes, O for 0 and l for 1, spaces
    sloppy = key.lower().replace("-", " ").replace("0", "o").replace("1", "l")
    assert parse_key(sloppy) == SECRET


@given(st.binary(min_size=16, max_size=16))
def test_any_secret_round_trips(secret: bytes) -> None:
    assert parse_key(format_key(secret)) == secret
    assert b32decode(b32encode(secret + b"\0" * 4)) == secret + b"\0" * 4


@given(st.binary(min_size=16, max_size=16), st.integers(0, 31), st.integers(1, 31))
def test_a_mistyped_character_is_caught(secret: bytes, pos: int, delta: int) -> None:
    key = format_key(secret)
    body = key[3:].replace("-", "")
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    typo = body[:pos] + alphabet[(alphabet.index(body[pos]) + delta) % 32] + body[pos + 1 :]
    with pytest.raises(KeyFormatError) as exc:
        parse_key("QB-" + typo)
    assert exc.value.reason == "checksum"


@pytest.mark.parametrize(
    ("text", "reason"),
    [("QB-1234", "length"), ("QB-UUUU-" + "A" * 28, "chars"), ("", "length")],
)
def test_malformed_keys_say_why(text: str, reason: str) -> None:
    with pytest.raises(KeyFormatError) as exc:
        parse_key(text)
    assert exc.value.reason == reason


# RFC 5869 appendix A, test cases 1 and 3 (SHA-256)
@pytest.mark.parametrize(
    ("ikm", "salt", "info", "okm"),
    [
        (
            "0b" * 22,
            "000102030405060708090a0b0c",
            "f0f1f2f3f4f5f6f7f8f9",
            "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865",
        ),
        (
            "0b" * 22,
            "",
            "",
            "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8",
        ),
    ],
)
def test_hkdf_rfc5869_vectors(ikm: str, salt: str, info: str, okm: str) -> None:
    assert hkdf(bytes.fromhex(ikm), bytes.fromhex(info), 42, salt=bytes.fromhex(salt)).hex() == okm


def test_identifier_and_kek_are_independent_and_stable() -> None:
    d = derive(SECRET)
    assert d == derive(SECRET)
    assert len(d.identifier) == 32 and len(d.kek) == 32
    assert bytes.fromhex(d.identifier) != d.kek[:16]
    assert derive(bytes(16)).identifier != d.identifier


def test_slot_wrapping() -> None:
    release = Release.new()
    d = derive(SECRET)
    wrapped = wrap(d.kek, release.key)
    assert len(wrapped) == 40
    assert unwrap(d.kek, wrapped) == release.key
    assert unwrap(derive(bytes(16)).kek, wrapped) is None
    tampered = bytes([wrapped[0] ^ 1]) + wrapped[1:]
    assert unwrap(d.kek, tampered) is None


TOKEN = "0123456789abcdef0123456789abcdef"


def _region(kind: str, index: int, inner: str, heading: str = "") -> str:
    hexed = heading.encode().hex() or "-"
    return f"<!--qbseal {TOKEN} open {kind} {index} {hexed}-->{inner}<!--qbseal {TOKEN} close {kind} {index}-->"


PAGE = (
    '<h1 id="t">Title</h1>'
    + _region("free", 0, "<p>free</p>")
    + _region(
        "premium",
        0,
        '<h2 id="deep-dark">Deep &amp; dark</h2><div class="highlight"><pre><code>x</code></pre></div>\n'
        '<h3 id="inner">Inner</h3><p>secret words here</p>',
        "Deep & dark",
    )
    + "\n<p>between</p>\n"
    + _region("premium", 1, '<h2 id="two">Two</h2><p>second secret</p>', "Two")
    + "\n<p>after</p>"
)


def _sections(sealed_file: bytes) -> dict[str, dict[str, str]]:
    body: dict[str, dict[str, dict[str, str]]] = json.loads(sealed_file)
    return body["sections"]


def seal(page: str, path: str, release: Release) -> SealedPage:
    return seal_page(page, path, release, TOKEN)


def test_seal_page_replaces_premium_regions_with_placeholders() -> None:
    release = Release.new()
    sealed = seal(PAGE, "/questions/a/", release)
    assert "secret" not in sealed.html and "Inner" not in sealed.html and TOKEN not in sealed.html
    # paywall.js finds placeholders as `.qb-locked[data-qb-file]`; the JSON-LD `hasPart` selector is `.qb-premium`
    placeholders = re.findall(r'<section class="qb-premium qb-locked" id="qb-premium-(\d)" data-qb-section="\1" '
                              r'data-qb-file="([0-9a-f]{20}\.json)">', sealed.html)
    assert [n for n, _ in placeholders] == ["0", "1"] and len({f for _, f in placeholders}) == 1
    assert '<h2 id="deep-dark">Deep &amp; dark</h2>' in sealed.html
    assert "<p>free</p>" in sealed.html and "<p>between</p>" in sealed.html and sealed.html.endswith("<p>after</p>")
    assert sealed.hidden_ids == {"inner"}
    (f,) = sealed.files
    assert re.fullmatch(r"assets/premium/[0-9a-f]{20}\.json", f.path)
    sec = _sections(f.content)["0"]
    plain = open_fragment(release.key, unb64(sec["n"]), unb64(sec["c"]), "/questions/a/", "0")
    assert "secret words here" in plain and "<pre><code>x</code></pre>" in plain


def test_a_hostile_premium_region_is_sealed_whole_and_sanitized() -> None:
    release = Release.new()
    hostile = (
        "<p>one</p></div></div></section><!-- <p>two</p> "
        f"<!--qbseal {'f' * 32} close premium 0--><style>x</style><script>y</script><p>three</p>"
    )
    page = "<p>free</p>" + _region("premium", 0, hostile, "H") + "<p>after</p>"
    sealed = seal(page, "/q/", release)
    assert sealed.html.startswith("<p>free</p><section") and sealed.html.endswith("</section><p>after</p>")
    for word in ("one", "two", "three", "style", "script"):
        assert word not in sealed.html.replace("qb-", ""), word
    sec = _sections(sealed.files[0].content)["0"]
    plain = open_fragment(release.key, unb64(sec["n"]), unb64(sec["c"]), "/q/", "0")
    assert "<p>one</p>" in plain and "three" in plain and "<style" not in plain and "<script" not in plain


def test_pages_without_regions_are_not_touched() -> None:
    # with the paywall off the renderer writes locked placeholders and no premium text at all
    page = '<p>free</p><div class="qb-premium qb-locked" data-qb-section="1"><p>Premium section</p></div>'
    sealed = seal(page, "/questions/a/", Release.new())
    assert sealed.html == page and sealed.files == [] and sealed.fragments == []
    assert premium_regions(page, TOKEN) == 0 and premium_regions(PAGE, TOKEN) == 2


def test_a_fragment_swapped_between_pages_or_sections_fails() -> None:
    release = Release.new()
    a = _sections(seal(PAGE, "/questions/a/", release).files[0].content)
    sec = a["0"]
    with pytest.raises(InvalidTag):
        open_fragment(release.key, unb64(sec["n"]), unb64(sec["c"]), "/questions/b/", "0")
    with pytest.raises(InvalidTag):
        open_fragment(release.key, unb64(sec["n"]), unb64(sec["c"]), "/questions/a/", "1")
    flipped = bytearray(unb64(sec["c"]))
    flipped[3] ^= 0x40
    with pytest.raises(InvalidTag):
        open_fragment(release.key, unb64(sec["n"]), bytes(flipped), "/questions/a/", "0")


def test_nonces_are_unique_across_a_release() -> None:
    release = Release.new()
    nonces = []
    for i in range(200):
        for f in seal(PAGE, f"/questions/q{i}/", release).files:
            nonces += [s["n"] for s in _sections(f.content).values()]
    assert len(nonces) == 400 and len(set(nonces)) == 400


def test_rotation_old_release_key_cannot_open_new_release() -> None:
    old, new = Release.new(), Release.new()
    assert old.key != new.key and old.release_id != new.release_id
    sec = _sections(seal(PAGE, "/questions/a/", new).files[0].content)["0"]
    with pytest.raises(InvalidTag):
        open_fragment(old.key, unb64(sec["n"]), unb64(sec["c"]), "/questions/a/", "0")
    assert "secret" in open_fragment(new.key, unb64(sec["n"]), unb64(sec["c"]), "/questions/a/", "0")


@pytest.mark.parametrize(
    "bad",
    [
        _region("premium", 0, "x").replace("close", "closed"),  # no end marker
        _region("premium", 0, _region("premium", 1, "x")),  # nested
        _region("premium", 0, "a") + _region("premium", 0, "b"),  # marked twice
        _region("premium", 0, "a").replace("<!--qbseal", "&lt;!--qbseal", 1),  # escaped by Markdown
        _region("premium", 0, "a").replace(TOKEN, "f" * 32),  # another build's token
        _region("free", 0, "a") + "<div>",  # left open outside the regions
    ],
)
def test_unsealable_markup_is_refused(bad: str) -> None:
    with pytest.raises(SealError):
        seal(bad, "/q/", Release.new())


def test_release_repr_hides_the_key() -> None:
    release = Release.new()
    assert release.key.hex() not in repr(release)
