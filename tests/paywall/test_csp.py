"""The Content-Security-Policy, directive by directive, and the inline hashes against digests made elsewhere."""

from __future__ import annotations

import pytest

from qbank.paywall.csp import (
    SiteHashes,
    add_csp,
    content_scripts,
    header_policy,
    inline_hashes,
    policy,
    site_policy,
)

# sha256 digests, base64, as `printf '%s' BODY | openssl dgst -sha256 -binary | base64` prints them
EMPTY = "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"
ALERT_1 = "'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI='"
P_RULE = "'sha256-gG2yISYereRMiG2lMXrbiUgi0Ubw9p7QCeWcroOvy9Y='"  # p{}

# every directive of the page policy, each with its exact sources: one dropped, added or loosened fails
PAGE_DIRECTIVES = {
    "default-src": "'self'",
    "script-src": "'self' 'wasm-unsafe-eval'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "font-src": "'self'",
    "connect-src": "'self'",
    "worker-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'self'",
    "form-action": "'self'",
}


def directives(csp: str) -> dict[str, str]:
    """Directive name -> sources, in order; a directive named twice is an error here."""
    out: dict[str, str] = {}
    for part in csp.split(";"):
        name, _, sources = part.strip().partition(" ")
        assert name not in out, f"{name} twice"
        out[name] = sources
    return out


def test_every_page_directive_is_pinned() -> None:
    csp = policy([], [])
    assert directives(csp) == PAGE_DIRECTIVES
    assert list(directives(csp)) == list(PAGE_DIRECTIVES)  # default-src first


@pytest.mark.parametrize("name", list(PAGE_DIRECTIVES))
def test_each_directive_survives_hashes(name: str) -> None:
    got = directives(policy([ALERT_1], [EMPTY]))
    want = {**PAGE_DIRECTIVES}
    want["script-src"] += " " + ALERT_1
    want["style-src"] += " " + EMPTY
    assert got[name] == want[name]


def test_the_header_adds_frame_ancestors_and_nothing_else() -> None:
    meta = policy([ALERT_1], [])
    header = directives(header_policy(meta))
    assert header.pop("frame-ancestors") == "'none'"
    assert header == directives(meta)


def test_inline_hashes_match_openssl_digests() -> None:
    page = (
        "<html><head><style></style><STYLE media=x>p{}</STYLE></head><body>"
        "<script>alert(1)</script>"  # a script
        "<SCRIPT type='text/javascript'>alert(1)</SCRIPT>"  # the same body again: one hash
        '<script type="module"></script>'  # a module script with an empty body
        '<script src="/a.js">ignored()</script>'  # external: allowed by 'self', no hash
        '<script type="application/ld+json">{"a": 1}</script>'  # a data block, not a script
        '<script id="__config" type="application/json">{}</script>'
        "</body></html>"
    )
    scripts, styles = inline_hashes(page)
    assert scripts == sorted([ALERT_1, EMPTY])
    assert styles == sorted([EMPTY, P_RULE])


@pytest.mark.parametrize("kind", ["", "text/javascript", "module", "application/javascript", "TEXT/JAVASCRIPT"])
def test_each_script_type_that_runs_is_hashed(kind: str) -> None:
    attrs = f' type="{kind}"' if kind else ""
    assert inline_hashes(f"<script{attrs}>alert(1)</script>") == ([ALERT_1], [])


@pytest.mark.parametrize("kind", ["application/json", "application/ld+json", "text/template", "importmap"])
def test_data_blocks_are_not_hashed(kind: str) -> None:
    assert inline_hashes(f'<script type="{kind}">alert(1)</script>') == ([], [])


def test_site_policy_unites_every_pages_hashes() -> None:
    pages = ["<script>alert(1)</script>", "<script></script><style></style>", "<p>none</p>"]
    got = directives(site_policy(pages))
    assert got["script-src"] == f"'self' 'wasm-unsafe-eval' {' '.join(sorted([ALERT_1, EMPTY]))}"
    assert got["style-src"] == f"'self' {EMPTY}"
    assert got["frame-ancestors"] == "'none'"
    assert {k: v for k, v in got.items() if k not in ("script-src", "style-src", "frame-ancestors")} == {
        k: v for k, v in PAGE_DIRECTIVES.items() if k not in ("script-src", "style-src")
    }


def test_content_scripts_counts_every_script_element() -> None:
    assert content_scripts("<p>x</p>") == 0
    assert content_scripts("<script>a</script><SCRIPT src=x></SCRIPT><scripts>") == 2


def _meta(page: str) -> str:
    return f'<meta http-equiv="Content-Security-Policy" content="{policy(*inline_hashes(page))}">'


def test_the_policy_is_first_in_head_after_the_charset() -> None:
    page = '<html><head lang="en"><meta charset="utf-8"><title>t</title><script>alert(1)</script></head></html>'
    out = add_csp(page)
    assert out == page.replace('<meta charset="utf-8">', '<meta charset="utf-8">' + _meta(page))
    assert ALERT_1 in out


def test_a_script_before_the_charset_keeps_the_policy_first() -> None:
    page = "<html><head><script>alert(1)</script><meta charset=utf-8></head></html>"
    assert add_csp(page) == page.replace("<head>", "<head>" + _meta(page))


def test_no_charset_puts_the_policy_right_after_head() -> None:
    page = "<html><HEAD><title>t</title></HEAD></html>"
    assert add_csp(page) == page.replace("<HEAD>", "<HEAD>" + _meta(page))


def test_a_page_without_head_is_left_alone() -> None:
    assert add_csp("<p>fragment</p>") == "<p>fragment</p>"


def test_an_inline_script_after_an_external_one_is_hashed() -> None:
    page = '<script src="/a.js"></script><script type="application/json">{}</script><script>alert(1)</script>'
    assert inline_hashes(page) == ([ALERT_1], [])


def test_a_charset_and_no_script_put_the_policy_after_the_charset() -> None:
    page = "<html><head><title>t</title><meta charset=utf-8><style></style></head><body></body></html>"
    assert add_csp(page) == page.replace("<meta charset=utf-8>", "<meta charset=utf-8>" + _meta(page))


def test_script_tags_in_capitals_and_bodies_over_several_lines() -> None:
    # printf '\nalert(1)\n' (and '\np{}\n') | openssl dgst -sha256 -binary | base64
    script = "'sha256-J8+4/wmqNoqVGih0Xof49bzVEIwR8aHhR5HvZK1wlzY='"
    style = "'sha256-S1+1UhUBsQI+oYzHJq9H6zGUGt9DphQexnvaBQ874Hc='"
    assert inline_hashes("<SCRIPT>\nalert(1)\n</SCRIPT >") == ([script], [])
    assert inline_hashes("<Style>\np{}\n</STYLE>") == ([], [style])


def test_add_csp_gathers_each_pages_hashes_under_its_path() -> None:
    seen = SiteHashes()
    first = "<html><head><style></style></head><body><script>alert(1)</script></body></html>"
    second = "<html><head></head><body><script></script><script>alert(1)</script></body></html>"
    assert add_csp(first, seen, "a/index.html") == add_csp(first)  # the page itself is the same
    add_csp(second, seen, "404.html")
    add_csp("<p>no head</p>", seen, "fragment.html")  # no policy given: nothing gathered, read again later
    assert seen == SiteHashes({"a/index.html", "404.html"}, {ALERT_1, EMPTY}, {EMPTY})
    add_csp(first)
    assert seen == SiteHashes({"a/index.html", "404.html"}, {ALERT_1, EMPTY}, {EMPTY})  # none given: none kept


def test_site_policy_adds_the_hashes_already_gathered() -> None:
    seen = SiteHashes({"a.html"}, {ALERT_1}, {EMPTY})
    got = directives(site_policy(["<p>none</p>"], seen))
    assert got["script-src"] == f"'self' 'wasm-unsafe-eval' {ALERT_1}" and got["style-src"] == f"'self' {EMPTY}"
    got = directives(site_policy(["<script></script>"], seen))
    assert got["script-src"] == f"'self' 'wasm-unsafe-eval' {' '.join(sorted([ALERT_1, EMPTY]))}"
    assert seen == SiteHashes({"a.html"}, {ALERT_1}, {EMPTY})  # not changed by reading more pages
