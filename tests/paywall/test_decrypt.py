"""`qbank paywall decrypt`'s reader (paywall/decrypt.py): which built file a page URL names, every reason a
page's premium text cannot be recovered (each a stable word), and the text recovered from a site resealed by
the real keyslot step and from a site still under its build's key. Sites are written without mkdocs
(tests/epoch/fake_build.py); the expected files, words and texts are written out here by hand."""

from __future__ import annotations

import base64
import datetime as dt
import json
import re
from pathlib import Path

import pytest

from qbank.paywall.decrypt import DecryptError, Opened, decrypt_page, page_file
from qbank.paywall.keys import derive, format_key, generate_secret, parse_key
from qbank.paywall.keyslots import run_keyslots
from qbank.paywall.ledger import open_ledger
from qbank.paywall.recipient import keygen, load_identity_text
from qbank.paywall.release import FORMAT, Release, b64
from qbank.paywall.slots import Active, Ended, keyslot_files

from ..epoch.fake_build import Pages, fake_build

TODAY = dt.date(2026, 12, 1)
PAGES: Pages = {
    "/questions/q1/": {"0": "<p>premium one</p>", "1": "<p>more one</p>"},
    "/questions/q2/": {"0": "<p>premium two</p>"},
}


class Site:
    """A deployed site (fake build, then the real keyslot step) and a key per license state."""

    def __init__(self, tmp_path: Path) -> None:
        ledger = tmp_path / "ledger.sqlite3"
        with open_ledger(ledger) as book:
            self.valid, self.unsold, self.expired, self.revoked = book.mint(4)
            book.sell(self.valid, TODAY - dt.timedelta(days=3), "reader@example.com")
            book.sell(self.expired, dt.date(2020, 1, 15), "old@example.com")  # six months: ended 2020-07-15
            book.sell(self.revoked, TODAY, "refund@example.com")
            book.revoke(self.revoked, "refunded")
        self.stranger = format_key(generate_secret())  # well formed, never minted
        identity, pub, _ = keygen(tmp_path / "identity.key")
        root = tmp_path / "repo"
        sealed = fake_build(root, PAGES, pub)
        run_keyslots(root / "site", sealed, load_identity_text(identity.read_text("ascii"), "id"), str(ledger), TODAY)
        self.site = root / "site"

    def page(self, path: str = "questions/q1/index.html") -> Path:
        return self.site / path

    def premium(self, page: str = "questions/q1/index.html") -> Path:
        name = re.search(r'data-qb-file="([^"]+)"', self.page(page).read_text()).group(1)  # type: ignore[union-attr]
        return self.site / "assets/premium" / name

    def release(self) -> str:
        return re.search(r'content="([0-9a-f]+)"', self.page().read_text()).group(1)  # type: ignore[union-attr]


@pytest.fixture
def site(tmp_path: Path) -> Site:
    return Site(tmp_path)


def refused(site: Path, url: str, key: str) -> tuple[str, str]:
    with pytest.raises(DecryptError) as caught:
        decrypt_page(site, url, key)
    return caught.value.reason, str(caught.value)


@pytest.mark.parametrize(
    ("url", "base", "file", "path"),
    [
        ("https://qbank.example/questions/q1/", "/", "questions/q1/index.html", "/questions/q1/"),
        ("/questions/q1/", "/", "questions/q1/index.html", "/questions/q1/"),
        ("questions/q1", "/", "questions/q1/index.html", "/questions/q1/"),  # a leading and a trailing slash added
        ("/questions/q1/index.html", "/", "questions/q1/index.html", "/questions/q1/"),
        ("/a.b/c", "/", "a.b/c/index.html", "/a.b/c/"),  # only the last segment's dot makes a file
        ("/sitemap.xml", "/", "sitemap.xml", "/sitemap.xml"),
        ("", "/", "index.html", "/"),
        ("https://qbank.example", "/", "index.html", "/"),
        ("https://x.example/qbank/questions/q1/", "/qbank/", "questions/q1/index.html", "/qbank/questions/q1/"),
        ("/qbank/questions/q1/", "/qbank", "questions/q1/index.html", "/qbank/questions/q1/"),
        ("/qbankish/q/", "/qbank/", "qbankish/q/index.html", "/qbankish/q/"),  # a prefix of a name is no base
    ],
)
def test_a_page_url_names_its_built_file(url: str, base: str, file: str, path: str) -> None:
    site = Path("/srv/site")
    assert page_file(site, url, base) == (site / file, path)


def test_a_valid_key_recovers_every_section_in_page_order(site: Site) -> None:
    assert decrypt_page(site.site, "/questions/q1/", site.valid) == [
        Opened("0", "Section 0", "<p>premium one</p>"),
        Opened("1", "Section 1", "<p>more one</p>"),
    ]
    # an unsold key reads too (it is given to no one yet, but may be sold any day)
    assert [o.html for o in decrypt_page(site.site, "https://qbank.example/questions/q2/", site.unsold)] == [
        "<p>premium two</p>"
    ]


def test_a_format_number_is_read_by_value(site: Site) -> None:
    # JSON's 2.0 is the number 2, as the browser reads it: the file is still format 2
    body = json.loads(site.premium().read_text())
    site.premium().write_text(json.dumps({**body, "v": float(body["v"])}))
    assert [o.html for o in decrypt_page(site.site, "/questions/q1/", site.valid)] == [
        "<p>premium one</p>",
        "<p>more one</p>",
    ]


def test_a_heading_is_shown_as_text(site: Site) -> None:
    page = site.page()
    page.write_text(page.read_text().replace("<h2>Section 0</h2>", '<h2 id="why">Why <code>A &amp; B</code></h2>'))
    assert [o.heading for o in decrypt_page(site.site, "/questions/q1/", site.valid)] == ["Why A & B", "Section 1"]


def test_each_license_that_reads_nothing_says_why(site: Site) -> None:
    assert refused(site.site, "/questions/q1/", site.expired) == ("expired", "this license expired on 2020-07-15")
    assert refused(site.site, "/questions/q1/", site.revoked) == ("revoked", "this license was revoked")
    assert refused(site.site, "/questions/q1/", site.stranger) == ("unknown", "this key has no keyslot in this release")


def test_a_page_that_cannot_be_read_says_why(site: Site) -> None:
    missing = site.site / "questions/q9/index.html"
    assert refused(site.site, "/questions/q9/", site.valid) == ("no-page", f"no built page at {missing}")
    assert refused(site.site, "/", site.valid) == ("no-premium", "/ has no premium sections")
    page = site.page()
    page.write_text(re.sub(r'<meta name="qbank-release" content="[0-9a-f]+">', "", page.read_text()))
    assert refused(site.site, "/questions/q1/", site.valid) == (
        "no-release",
        "/questions/q1/ does not name its release (built before keyslots were versioned?)",
    )


def test_a_release_without_keyslots_says_which_step_to_run(site: Site) -> None:
    release = site.release()
    ident = derive(parse_key(site.valid)).identifier
    shard = site.site / "assets/keyslots" / release / f"{ident[:2]}.json"
    shard.unlink()
    assert refused(site.site, "/questions/q1/", site.valid) == (
        "no-slots",
        f"no keyslot file {shard}: run `qbank paywall keyslots` for release {release}",
    )


def test_a_corrupted_keyslot_is_tampered(site: Site) -> None:
    ident = derive(parse_key(site.valid)).identifier
    shard = site.site / "assets/keyslots" / site.release() / f"{ident[:2]}.json"
    doc = json.loads(shard.read_text())
    k, m = doc["slots"][ident]
    raw = bytearray(base64.b64decode(m))
    raw[20] ^= 1
    doc["slots"][ident] = [k, base64.b64encode(bytes(raw)).decode()]
    shard.write_text(json.dumps(doc))
    assert refused(site.site, "/questions/q1/", site.valid) == (
        "tampered",
        "the keyslot does not open with this key: InvalidTag (corrupted keyslot file)",
    )


@pytest.mark.parametrize("other", ["0" * 16, "f" * 16])  # sorting before the page's release and after it
def test_a_ciphertext_file_of_another_release_is_stale(site: Site, other: str) -> None:
    body = json.loads(site.premium().read_text())
    body["release"] = other
    site.premium().write_text(json.dumps(body))
    assert refused(site.site, "/questions/q1/", site.valid) == (
        "stale",
        "the page and its ciphertext belong to different releases",
    )


def test_an_altered_section_fails_authentication(site: Site) -> None:
    body = json.loads(site.premium().read_text())
    c = bytearray(base64.b64decode(body["sections"]["1"]["c"]))
    c[0] ^= 1
    body["sections"]["1"]["c"] = base64.b64encode(bytes(c)).decode()
    site.premium().write_text(json.dumps(body))
    assert refused(site.site, "/questions/q1/", site.valid) == ("tampered", "section 1 fails authentication")


def test_a_site_still_under_its_builds_key_opens_with_its_fragments(tmp_path: Path) -> None:
    """Format-1 ciphertext files (sealed by `qbank build`, not yet resealed under an epoch) open with the
    release key a keyslot gives."""
    key = format_key(generate_secret())
    lic = derive(parse_key(key))
    release = Release.new()
    site = tmp_path / "site"
    body = {"v": FORMAT, "release": release.release_id, "page": "/q/", "sections": {}}
    nonce, ct = release.seal("<p>build-time text</p>", "/q/", "0")
    body["sections"]["0"] = {"n": b64(nonce), "c": b64(ct)}  # type: ignore[index]
    (site / "assets/premium").mkdir(parents=True)
    (site / "assets/premium/f.json").write_text(json.dumps(body))
    (site / "q").mkdir()
    (site / "q/index.html").write_text(
        f'<meta name="qbank-release" content="{release.release_id}">'
        '<section class="qb-premium qb-locked" id="qb-premium-0" data-qb-section="0" data-qb-file="f.json">'
        "\n<h2>Zero</h2>\n</section>"
    )
    slots = keyslot_files(release.key, release.release_id, [Active(lic.identifier, lic.kek, None)], [])
    for rel, content in slots.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_bytes(content)
    assert decrypt_page(site, "/q/", key) == [Opened("0", "Zero", "<p>build-time text</p>")]
    # a format-1 section altered is tampered too
    body["sections"]["0"]["c"] = b64(bytes([ct[0] ^ 1]) + ct[1:])  # type: ignore[index]
    (site / "assets/premium/f.json").write_text(json.dumps(body))
    assert refused(site, "/q/", key) == ("tampered", "section 0 fails authentication")


def test_an_opened_section_is_a_frozen_value() -> None:
    opened = Opened("0", "Zero", "<p>x</p>")
    assert {opened, Opened("0", "Zero", "<p>x</p>")} == {opened}
    with pytest.raises(AttributeError):  # dataclasses.FrozenInstanceError
        opened.html = "<p>y</p>"  # type: ignore[misc]


def test_a_ciphertext_file_of_a_later_format_is_not_read_as_this_one(site: Site) -> None:
    body = json.loads(site.premium().read_text())
    site.premium().write_text(json.dumps({**body, "v": body["v"] + 1}))
    assert refused(site.site, "/questions/q1/", site.valid) == ("tampered", "section 0 fails authentication")


def test_a_status_other_than_active_opens_nothing(tmp_path: Path) -> None:
    """An entry that opens with the key but says neither active, expired nor revoked gives no release key."""
    key = format_key(generate_secret())
    lic = derive(parse_key(key))
    release = Release.new()
    site = tmp_path / "site"
    (site / "q").mkdir(parents=True)
    (site / "q/index.html").write_text(
        f'<meta name="qbank-release" content="{release.release_id}">'
        '<section class="qb-premium qb-locked" id="qb-premium-0" data-qb-section="0" data-qb-file="f.json">'
        "\n<h2>Zero</h2>\n</section>"
    )
    nonce, ct = release.seal("<p>text</p>", "/q/", "0")
    sections = {"0": {"n": b64(nonce), "c": b64(ct)}}
    body = {"v": FORMAT, "release": release.release_id, "page": "/q/", "sections": sections}
    (site / "assets/premium").mkdir(parents=True)
    (site / "assets/premium/f.json").write_text(json.dumps(body))
    slots = keyslot_files(release.key, release.release_id, [], [Ended(lic.identifier, "suspended", None, lic.kek)])
    for rel, content in slots.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_bytes(content)
    assert refused(site, "/q/", key) == ("revoked", "this license was revoked")
