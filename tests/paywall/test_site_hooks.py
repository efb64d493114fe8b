"""The paywall's side of a build (``qbank.paywall.site``) driven directly, without mkdocs: the settings it reads,
the table of contents it prunes, the release it names, the files and public record it writes, and every
problem it reports, each compared with a value the test writes out itself."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from mkdocs.structure.toc import AnchorLink

from qbank.paywall import site
from qbank.paywall.csp import SiteHashes, inline_hashes
from qbank.paywall.recipient import ENV_RECIPIENT, keygen
from qbank.problems import error, warning

TOKEN = "00112233445566778899aabbccddeeff"


def region(kind: str, index: int, inner: str, heading: str = "") -> str:
    hexed = heading.encode().hex() or "-"
    return f"<!--qbseal {TOKEN} open {kind} {index} {hexed}-->{inner}<!--qbseal {TOKEN} close {kind} {index}-->"


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.delenv(ENV_RECIPIENT, raising=False)
    monkeypatch.delenv("QBANK_LEDGER", raising=False)
    (tmp_path / "mkdocs.yml").write_text("site_name: t\n")
    return {"config_file_path": str(tmp_path / "mkdocs.yml"), "site_dir": str(tmp_path / "out" / "deep" / "site"),
            "docs_dir": str(tmp_path / "docs"), "site_url": "https://example.org/sub/",
            "extra": {"paywall": {"enabled": True}}}


def page(url: str = "questions/a/", toc: list[AnchorLink] | None = None) -> Any:
    return SimpleNamespace(file=SimpleNamespace(src_uri="questions/a.md"), url=url,
                           toc=SimpleNamespace(items=toc) if toc is not None else None)


def link(anchor: str, *children: AnchorLink) -> AnchorLink:
    item = AnchorLink(anchor.title(), anchor, 2)
    item.children = list(children)
    return item


def test_paths_and_page_urls() -> None:
    assert site.sealed_release_path(Path("/r"), "abc") == Path("/r/.qbank/release/abc.sealed.json")
    assert site.page_path({"site_url": "https://example.org/sub/"}, "questions/a/") == "/sub/questions/a/"
    assert site.page_path({"site_url": "https://example.org"}, "/questions/a/") == "/questions/a/"
    assert site.page_path({"site_url": None}, "questions/a/") == "/questions/a/"


def test_settings_and_their_defaults(config: dict[str, Any]) -> None:
    build = site.on_config(config)
    assert build.enabled and build.buy_url == "/sub/pricing/" and build.site_url == "https://example.org/sub/"
    assert build.today == dt.date.today() and build.recipient is None and build.base_path == "/sub/"
    assert site.on_config(config, today=dt.date(2026, 1, 2)).today == dt.date(2026, 1, 2)
    bare = {**config, "site_url": None, "extra": {"paywall": {"buy_url": "https://shop.example/buy"}}}
    build = site.on_config(bare)
    assert not build.enabled and build.buy_url == "https://shop.example/buy" and build.site_url == ""
    assert build.base_path == "/"
    assert site.on_config({**config, "site_url": None, "extra": {}}).buy_url == "/pricing/"


def test_inner_headings_of_a_sealed_section_leave_the_table_of_contents(config: dict[str, Any]) -> None:
    site.on_config(config)
    html = ("<h2 id=\"free\">Free</h2>" + region("premium", 0, '<h2 id="locked">Locked</h2><h3 id="inner">Inner</h3>'
            '<p>x</p><h3 id="deeper">Deeper</h3>', "Locked") + '<h2 id="after">After</h2>')
    toc = [link("free"), link("locked", link("inner"), link("deeper")), link("after", link("kept"))]
    p = page(toc=toc)
    site.on_page_content(html, p, config, TOKEN)
    shape = [(i.id, [c.id for c in i.children]) for i in p.toc.items]
    assert shape == [("free", []), ("locked", []), ("after", ["kept"])]
    assert site.on_page_content("<p>no regions</p>", page(toc=None), config, TOKEN) == "<p>no regions</p>"
    # a page without a table of contents is sealed all the same
    assert "Inner" not in site.on_page_content(html, page(toc=None), config, TOKEN)


def test_a_free_heading_after_a_hidden_one_stays(config: dict[str, Any]) -> None:
    site.on_config(config)
    html = (region("premium", 0, '<h2 id="locked">Locked</h2><h3 id="inner">Inner</h3><p>x</p>', "Locked")
            + '<h3 id="free-tail">Free tail</h3>')
    p = page(toc=[link("locked", link("inner"), link("free-tail"))])
    site.on_page_content(html, p, config, TOKEN)
    assert [(i.id, [c.id for c in i.children]) for i in p.toc.items] == [("locked", ["free-tail"])]


def test_premium_regions_with_the_paywall_off_are_refused(config: dict[str, Any]) -> None:
    site.on_config({**config, "extra": {"paywall": {"enabled": False}}})
    with pytest.raises(site.PaywallBuildError, match="paywall is disabled"):
        site.on_page_content(region("premium", 0, "<p>x</p>"), page(), config, TOKEN)


def test_the_release_is_named_only_on_pages_that_open_with_it(config: dict[str, Any]) -> None:
    build = site.on_config(config)
    head = '<html><head><meta charset="utf-8"></head><body>'
    meta = f'<meta name="qbank-release" content="{build.release.release_id}">'
    for marker in ('<section data-qb-file="f.json">', '<span data-qb-unlock-count="3">'):
        out = site.on_post_page(head + marker + "</body></HEAD></html>", config)
        assert out.count(meta) == 1 and meta + "</head>" in out and "</HEAD>" in out, out
    assert meta not in site.on_post_page(head + "<p>free</p></body></html>", config)
    assert meta not in site.on_post_page(head + '<section data-qb-file="f.json"></body></html>', None)
    site.on_config({**config, "extra": {"paywall": {"enabled": False}}})
    assert "qbank-release" not in site.on_post_page(head + '<section data-qb-file="f.json"></body></html>', config)


def test_a_finished_pages_hashes_are_gathered_for_the_sites_header(config: dict[str, Any]) -> None:
    site.on_config(config)
    seen = SiteHashes()
    page_html = "<html><head></head><body><script>alert(1)</script></body></html>"
    assert site.on_post_page(page_html, config, seen, "q/index.html") == site.on_post_page(page_html, config)
    assert seen == SiteHashes({"q/index.html"}, set(inline_hashes(page_html)[0]), set())


def sealed_build(config: dict[str, Any]) -> site.PaywallBuild:
    build = site.on_config(config)
    site.on_page_content(region("premium", 0, "<p>secret</p>", "Locked"), page(), config, TOKEN)
    return build


def info(config: dict[str, Any]) -> str:
    return (Path(config["site_dir"]) / site.BUILD_INFO).read_text("utf-8")


def record(site_url: str, release: str | None) -> str:
    return json.dumps({"format": 1, "release": release, "site_url": site_url}, indent=1) + "\n"


def test_a_build_without_a_recipient_writes_ciphertext_and_warns(config: dict[str, Any]) -> None:
    build = sealed_build(config)
    site.on_post_build(config)
    out = Path(config["site_dir"])
    (f,) = build.files
    assert (out / f.path).read_bytes() == f.content
    assert info(config) == record("https://example.org/sub/", build.release.release_id)
    assert build.problems == [warning(
        "mkdocs.yml", 0, 0, "paywall-no-recipient",
        "no release recipient: set extra.paywall.recipient or $QBANK_RELEASE_RECIPIENT; premium sections are "
        "encrypted and no key will ever open this build")]
    assert build.sealed is None


def test_a_missing_recipient_is_named(config: dict[str, Any]) -> None:
    config["extra"]["paywall"]["recipient"] = "keys/release.pub"
    build = sealed_build(config)
    site.on_post_build(config)
    assert [p.message for p in build.problems] == [
        "no release recipient (keys/release.pub does not exist): set extra.paywall.recipient or "
        "$QBANK_RELEASE_RECIPIENT; premium sections are encrypted and no key will ever open this build"]


def test_an_unreadable_or_invalid_recipient_is_an_error(config: dict[str, Any], tmp_path: Path) -> None:
    (tmp_path / "keys" / "release.pub").mkdir(parents=True)  # a folder: reading it fails
    config["extra"]["paywall"]["recipient"] = "keys/release.pub"
    build = sealed_build(config)
    site.on_post_build(config)
    assert build.problems == [error("keys/release.pub", 0, 0, "paywall-recipient",
                                    "cannot read the recipient: IsADirectoryError")]
    outside = tmp_path.parent / f"{tmp_path.name}-bad.pub"
    outside.write_text("not a key\n")
    config["extra"]["paywall"]["recipient"] = str(outside)
    build = sealed_build(config)
    site.on_post_build(config)
    assert len(build.problems) == 1
    (p,) = build.problems
    assert p.text().startswith(f"{outside.name}:0:0: error: ") and p.code == "paywall-recipient"


def test_a_good_recipient_gets_the_release_key_sealed_privately(config: dict[str, Any], tmp_path: Path) -> None:
    _, pub, _ = keygen(tmp_path / "keys" / "release.key")
    config["extra"]["paywall"]["recipient"] = "keys/release.key.pub"
    assert pub == tmp_path / "keys" / "release.key.pub"
    build = sealed_build(config)
    site.on_post_build(config)
    assert build.problems == []
    assert build.sealed == tmp_path / ".qbank" / "release" / f"{build.release.release_id}.sealed.json"
    assert build.sealed.stat().st_mode & 0o777 == 0o600


def test_a_build_with_nothing_sealed_names_no_release(config: dict[str, Any]) -> None:
    Path(config["site_dir"]).mkdir(parents=True)  # the folder may exist already
    build = site.on_config(config)  # enabled, but no premium section on any page
    site.on_post_build(config)
    assert info(config) == record("https://example.org/sub/", None) and build.problems == []


def test_a_ledger_named_inside_the_site_or_docs_is_refused(
    config: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for inside in (Path(config["site_dir"]) / "ledger.sqlite3", Path(config["docs_dir"]) / "x" / "l.sqlite3"):
        monkeypatch.setenv("QBANK_LEDGER", str(inside))
        build = sealed_build(config)
        site.on_post_build(config)
        folder = Path(config["site_dir"] if "site" in inside.parts else config["docs_dir"]).name
        assert build.problems == [error("mkdocs.yml", 0, 0, "paywall-ledger-published",
                                        f"$QBANK_LEDGER names a file inside {folder}/: it would be published")]


def test_a_ledger_elsewhere_or_in_object_storage_is_not_a_problem(
    config: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run from inside the site folder, where a relative or bucket name would resolve inside it if it were read
    as a path: an s3:// name is never a path, and no name at all is no ledger."""
    out = Path(config["site_dir"])
    out.mkdir(parents=True)
    monkeypatch.chdir(out)
    for named in ("s3://bucket/ledger.sqlite3", ""):
        monkeypatch.setenv("QBANK_LEDGER", named)
        build = sealed_build(config)
        site.on_post_build(config)
        assert [p.code for p in build.problems] == ["paywall-no-recipient"], named
