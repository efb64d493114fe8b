"""Sealing one page (``qbank.paywall.encrypt``): which regions are sealed, what each placeholder says, the
ciphertext file's bytes, the word count's rounding and the nesting repair, each stated by the test itself."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re

import pytest

from qbank.paywall.encrypt import (
    CiphertextFile,
    PremiumFragment,
    SealError,
    about_words,
    balanced,
    placeholder,
    premium_regions,
    seal_page,
)
from qbank.paywall.release import FORMAT, Release, open_fragment, unb64

TOKEN = "fedcba9876543210fedcba9876543210"


def region(kind: str, index: int, inner: str, heading: str = "") -> str:
    hexed = heading.encode().hex() or "-"
    return f"<!--qbseal {TOKEN} open {kind} {index} {hexed}-->{inner}<!--qbseal {TOKEN} close {kind} {index}-->"


def words(n: int) -> str:
    return " ".join(f"w{i}" for i in range(n))


@pytest.mark.parametrize(("n", "shown"), [
    (0, 10), (1, 10), (14, 10), (15, 20), (24, 20), (25, 20), (26, 30), (44, 40), (45, 40), (46, 50),
    (55, 60), (123, 120), (999, 1000), (2000, 2000),
])
def test_about_words_rounds_to_tens_half_to_even_and_never_below_ten(n: int, shown: int) -> None:
    """Python's round() sends a half to the even ten (25 to 20, 55 to 60); a short section still says about 10."""
    assert about_words(words(n)) == shown


def test_every_kind_of_region_other_than_premium_stays_in_clear() -> None:
    """Free and preview parts are sanitized and kept; only premium ones are sealed and counted."""
    page = (region("free", 0, "<p>free words</p>") + region("preview", 0, "<p>preview words</p>")
            + region("premium", 0, "<p>sealed words</p>", "Locked"))
    sealed = seal_page(page, "/q/", Release.new(), TOKEN)
    assert "<p>free words</p>" in sealed.html and "<p>preview words</p>" in sealed.html
    assert "sealed words" not in sealed.html
    assert [f.section for f in sealed.fragments] == ["0"] and [f.text for f in sealed.fragments] == ["sealed words"]
    assert premium_regions(page, TOKEN) == 1
    assert premium_regions(region("preview", 0, "<p>x</p>") + region("free", 1, "<p>y</p>"), TOKEN) == 0


def test_only_the_first_locked_section_carries_the_unlock_call() -> None:
    page = ("<p>intro</p>" + region("premium", 2, "<p>one</p>", "First") + "<p>mid</p>"
            + region("premium", 5, "<p>two</p>", "Second") + region("premium", 7, "<p>three</p>", "Third"))
    sealed = seal_page(page, "/q/", Release.new(), TOKEN, buy_url="/buy/")
    sections = re.findall(r'<section class="qb-premium qb-locked" id="qb-premium-(\d)".*?</section>', sealed.html,
                          re.DOTALL)
    assert sections == ["2", "5", "7"]
    blocks = re.split(r"(?=<section )", sealed.html)[1:]
    calls = [("qb-unlock-open" in b, 'href="/buy/"' in b) for b in blocks]
    assert calls == [(True, True), (False, False), (False, False)]


def test_the_call_to_action_follows_page_order_not_section_numbers() -> None:
    page = region("premium", 5, "<p>one</p>", "First") + region("premium", 2, "<p>two</p>", "Second")
    sealed = seal_page(page, "/q/", Release.new(), TOKEN)
    blocks = re.split(r"(?=<section )", sealed.html)[1:]
    assert ['id="qb-premium-5"' in b for b in blocks] == [True, False]
    assert ["qb-unlock-open" in b for b in blocks] == [True, False]


def test_a_region_without_a_heading_is_named_premium_section() -> None:
    sealed = seal_page(region("premium", 0, "<p>body</p>"), "/q/", Release.new(), TOKEN)
    assert "<h2>Premium section</h2>" in sealed.html
    assert sealed.fragments[0].heading == "Premium section"


def test_the_ciphertext_file_is_sorted_compact_json_named_by_its_hash() -> None:
    release = Release.new()
    sealed = seal_page(region("premium", 0, "<p>body text</p>", "H"), "/questions/x/", release, TOKEN)
    (f,) = sealed.files
    body = json.loads(f.content)
    assert set(body) == {"v", "release", "page", "sections"}
    assert (body["v"], body["release"], body["page"]) == (FORMAT, release.release_id, "/questions/x/")
    expected = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    assert f.content == expected  # keys in order, no spaces: the same sections give the same bytes
    assert f.path == "assets/premium/" + hashlib.sha256(expected).hexdigest()[:20] + ".json"
    sec = body["sections"]["0"]
    assert open_fragment(release.key, unb64(sec["n"]), unb64(sec["c"]), "/questions/x/", "0") == "<p>body text</p>"


def test_placeholders_show_the_call_to_action_unless_told_otherwise() -> None:
    assert "qb-unlock-open" in placeholder("1", "H", None, 40, "f.json", "/pricing/")
    assert "qb-unlock-open" not in placeholder("1", "H", None, 40, "f.json", "/pricing/", first=False)


def test_balanced_removes_whole_stray_closing_tags_and_names_the_innermost_open_element() -> None:
    assert balanced("<div><p>a</p></span></div></em>") == "<div><p>a</p></div>"
    with pytest.raises(SealError, match="does not nest"):
        balanced("<p>a</p></div >")  # a stray that is not a bare closing tag is refused, not cut
    with pytest.raises(SealError, match=r"<span> left open"):
        balanced("<div><section><span>a")


def test_broken_markers_are_a_seal_error() -> None:
    broken = f"<!--qbseal {TOKEN} open premium 0 -->no end"
    with pytest.raises(SealError):
        premium_regions(broken, TOKEN)
    with pytest.raises(SealError):
        seal_page(broken, "/q/", Release.new(), TOKEN)


def test_what_a_seal_hands_back_cannot_be_changed() -> None:
    sealed = seal_page(region("premium", 0, "<p>body</p>", "H"), "/q/", Release.new(), TOKEN)
    file, fragment = sealed.files[0], sealed.fragments[0]
    assert isinstance(file, CiphertextFile) and isinstance(fragment, PremiumFragment)
    with pytest.raises(dataclasses.FrozenInstanceError):
        file.content = b"x"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        fragment.html = "x"  # type: ignore[misc]
