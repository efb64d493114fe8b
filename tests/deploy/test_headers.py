"""Object metadata and the `_headers`/`_redirects` host files."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import pytest

from qbank.deploy.headers import (
    CSP,
    IMMUTABLE,
    SHORT,
    STATIC,
    HeaderRule,
    cache_control_for,
    csp_for_site,
    header_rules,
    headers_for,
    parse_headers,
    parse_redirects,
    render_headers,
    render_redirects,
    site_files,
    write_host_files,
)
from qbank.paywall.csp import SiteHashes, add_csp, header_policy


@pytest.mark.parametrize(
    ("path", "cache"),
    [
        ("assets/stylesheets/main.57a0d79d.min.css", IMMUTABLE),
        ("assets/stylesheets/palette.fb2fffe2.min.css.map", IMMUTABLE),
        ("assets/javascripts/bundle.a5f9d56c.min.js", IMMUTABLE),
        ("assets/javascripts/workers/search.a7633da7.min.js", IMMUTABLE),
        ("assets/premium/kv-cache-at-1m.bin", IMMUTABLE),  # ciphertext: a new release writes new names
        ("assets/keyslots/3f.json", SHORT),  # keyslots keep their names and change every release
        ("assets/keyslots/3fa9c0de12.json", SHORT),  # even when the shard name looks like a hash
        ("index.html", SHORT),
        ("questions/kv-cache/index.html", SHORT),
        ("404.html", SHORT),
        ("sitemap.xml", SHORT),
        ("sitemap.xml.gz", SHORT),
        ("search/search_index.json", SHORT),
        ("robots.txt", SHORT),
        ("assets/images/favicon.png", STATIC),
        ("assets/javascripts/lunr/min/lunr.stemmer.support.min.js", STATIC),
        ("assets/stylesheets/extra.css", STATIC),
    ],
)
def test_cache_control(path: str, cache: str) -> None:
    assert cache_control_for(path) == cache


def test_gzip_sitemap_is_a_gzip_file_not_an_encoding() -> None:
    h = headers_for("sitemap.xml.gz", ["sitemap.xml", "sitemap.xml.gz"])
    assert (h.content_type, h.content_encoding) == ("application/gzip", None)


def test_precompressed_sibling_is_an_encoding_of_its_file() -> None:
    h = headers_for("search/search_index.json.gz", ["search/search_index.json"])
    assert (h.content_type, h.content_encoding, h.cache_control) == ("application/json", "gzip", SHORT)
    lone = headers_for("downloads/corpus.tar.gz", [])
    assert (lone.content_type, lone.content_encoding) == ("application/gzip", None)


def test_text_types_carry_a_charset() -> None:
    assert headers_for("a/index.html").content_type == "text/html; charset=utf-8"
    assert headers_for("x.css").content_type == "text/css; charset=utf-8"
    assert headers_for("x.js").content_type == "text/javascript; charset=utf-8"
    assert headers_for("x.woff2").content_type == "font/woff2"
    assert headers_for("x.unknownext").content_type == "application/octet-stream"


def test_csp_has_no_third_party_origin_and_no_unsafe_script() -> None:
    directives = dict(d.strip().split(" ", 1) for d in CSP.split(";"))
    assert directives["default-src"] == "'self'" and directives["script-src"] == "'self' 'wasm-unsafe-eval'"
    assert directives["object-src"] == "'none'" and directives["frame-ancestors"] == "'none'"
    sources = " ".join(directives.values()).split()
    assert all(s.startswith("'") or s == "data:" for s in sources), sources


def test_inline_scripts_are_allowed_by_hash_only(tmp_path: Path) -> None:
    body = 'var __md_scope=new URL(".",location)'
    html = f'<script>{body}</script><script src="a.js"></script>'
    html += '<script id="__config" type="application/json">{}</script>'
    (tmp_path / "a.html").write_text(html)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "index.html").write_text(html)
    expected = "'sha256-" + base64.b64encode(hashlib.sha256(body.encode()).digest()).decode() + "'"
    script_src = dict(d.strip().split(" ", 1) for d in csp_for_site(tmp_path).split(";"))["script-src"]
    assert script_src == f"'self' 'wasm-unsafe-eval' {expected}"  # external scripts and data blocks need no hash


def test_the_header_is_the_pages_own_policy_plus_frame_ancestors(tmp_path: Path) -> None:
    page = "<html><head><style>p{color:red}</style></head><body><script>alert(1)</script></body></html>"
    (tmp_path / "index.html").write_text(add_csp(page))
    (tmp_path / "other.html").write_text("<html><head></head><body><script>alert(2)</script></body></html>")
    meta = re.search(r'content="([^"]+)"', add_csp(page))
    assert meta is not None
    csp = csp_for_site(tmp_path)
    assert "'unsafe-inline'" not in csp and csp.endswith("; frame-ancestors 'none'")
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
    own = dict(d.strip().split(" ", 1) for d in header_policy(meta.group(1)).split(";"))
    assert directives.keys() == own.keys()
    for name, value in own.items():
        if name == "script-src":  # every page's scripts: this one's and the other page's
            assert set(value.split()) < set(directives[name].split()) and len(directives[name].split()) == 4
        else:
            assert directives[name] == value, name
    assert directives["style-src"].startswith("'self' 'sha256-")


def test_rules_round_trip_and_never_set_cache_control_twice() -> None:
    paths = [
        "index.html",
        "assets/stylesheets/main.57a0d79d.min.css",
        "assets/premium/0123abcd89.bin",
        "assets/keyslots/ab.json",
        "assets/images/favicon.png",
        "search/search_index.json",
    ]
    rules = header_rules(paths)
    assert parse_headers(render_headers(rules)) == rules
    for path in paths:
        setting = [r.pattern for r in rules if r.matches("/" + path) and "Cache-Control" in dict(r.headers)]
        # Cloudflare Pages joins a header set by two matching rules with a comma: one rule at most per path
        assert len(setting) <= 1, (path, setting)
        if cache_control_for(path) == IMMUTABLE:
            assert setting, path
    assert all(r.matches("/" + p) for p in paths for r in rules[:1])


def test_splat_matching() -> None:
    rule = HeaderRule("/assets/*.css", ())
    assert rule.matches("/assets/a/b.css") and not rule.matches("/assets/a.js") and not rule.matches("/x.css")
    assert HeaderRule("/exact", ()).matches("/exact") and not HeaderRule("/exact", ()).matches("/exact/")


def test_redirects_round_trip() -> None:
    text = render_redirects({"/questions/old/": "/questions/new/"})
    assert parse_redirects(text) == {"/questions/old/": ("/questions/new/", 301)}
    rules = [line for line in text.splitlines() if not line.startswith("#")]
    assert rules == ["/questions/old/ /questions/new/ 301"]  # no 404 rule: Cloudflare Pages rejects them


def test_write_host_files(tmp_path: Path) -> None:
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "bundle.0123abcd.min.js").write_text("x")
    (tmp_path / "index.html").write_text("<p>hi</p>")
    written = write_host_files(tmp_path)
    assert [p.name for p in written] == ["_headers", "_redirects"]
    rules = parse_headers((tmp_path / "_headers").read_text())
    assert rules[0].pattern == "/*" and dict(rules[0].headers)["Content-Security-Policy"] == CSP
    assert HeaderRule("/assets/bundle.0123abcd.min.js", (("Cache-Control", IMMUTABLE),)) in rules


def test_pages_the_build_has_hashed_are_not_read_again(tmp_path: Path) -> None:
    seen = SiteHashes()
    written = add_csp("<html><head></head><body><script>alert(1)</script></body></html>", seen, "a/index.html")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "index.html").write_text(written.replace("alert(1)", "alert(3)"))  # not what was hashed
    (tmp_path / "404.html").write_text("<html><head></head><body><script>alert(2)</script></body></html>")
    hashes = dict(d.strip().split(" ", 1) for d in csp_for_site(tmp_path, seen).split(";"))["script-src"].split()
    alert = ["'sha256-" + base64.b64encode(hashlib.sha256(f"alert({i})".encode()).digest()).decode() + "'"
             for i in (1, 2, 3)]
    assert hashes == ["'self'", "'wasm-unsafe-eval'", *sorted(alert[:2])]  # the gathered page's, and 404's read
    everything = dict(d.strip().split(" ", 1) for d in csp_for_site(tmp_path).split(";"))["script-src"].split()
    assert everything == ["'self'", "'wasm-unsafe-eval'", *sorted(alert[1:])]  # without: every page read


def test_site_files_are_what_rglob_and_is_file_give(tmp_path: Path) -> None:
    for rel in ("index.html", "a/b/c.css", "a/b/d/e.js", "f g/h.png", "assets/cards/x.png"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(rel)
    (tmp_path / "empty").mkdir()
    (tmp_path / "link.css").symlink_to(tmp_path / "a/b/c.css")  # a link to a file: a file
    (tmp_path / "linked-dir").symlink_to(tmp_path / "a")  # a link to a folder: not entered
    (tmp_path / "broken.js").symlink_to(tmp_path / "nowhere.js")  # a broken link: no file
    expected = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert sorted(site_files(tmp_path)) == expected == sorted(
        ["index.html", "a/b/c.css", "a/b/d/e.js", "f g/h.png", "assets/cards/x.png", "link.css"])
