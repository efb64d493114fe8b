"""Head tags and JSON-LD: escaped, absolute, matching the breadcrumbs."""

from __future__ import annotations

import json
import posixpath
import re

from qbank.render.pages import Page
from qbank.render.seo import PageMeta, breadcrumb_list, crumbs_markdown, head_html, jsonld_script
from qbank.render.settings import Settings, settings_from
from qbank.render.text import fit, rel, url_of


def test_urls_and_relative_links() -> None:
    assert url_of("index.md") == ""
    assert url_of("topics/index.md") == "topics/"
    assert url_of("companies/xai/index.md") == "companies/xai/"
    assert url_of("companies/xai/kv-cache.md") == "companies/xai/kv-cache/"
    assert rel("questions/a.md", "topics/b.md") == "../topics/b.md"
    assert rel("index.md", "pricing.md") == "pricing.md"
    assert rel("companies/xai/kv-cache.md", "companies/xai/index.md") == "index.md"
    paths = ["index.md", "pricing.md", "topics/index.md", "topics/a.md", "companies/x/index.md",
             "companies/x/a.md", "companies/index.md", "questions/q.md", "companies/y/a.md"]
    for src in paths:
        for dst in paths:
            assert rel(src, dst) == posixpath.relpath(dst, posixpath.dirname(src) or "."), (src, dst)


def test_head_escapes_and_is_absolute() -> None:
    meta = PageMeta(
        path="questions/x.md",
        title='A "quoted" <title>',
        description="Less < more & done",
        crumbs=(("Home", "index.md"), ('A "quoted" <title>', "questions/x.md")),
        jsonld=({"@type": "TechArticle", "headline": "</script><script>alert(1)</script>"},),
        kind="question",
    )
    head = head_html(meta, Settings(site_url="https://example.org/sub"))
    assert 'content="A &#34;quoted&#34; &lt;title&gt;"' in head  # markupsafe writes &#34; for "
    assert '<meta property="og:url" content="https://example.org/sub/questions/x/">' in head
    assert '<meta property="og:type" content="article">' in head
    assert "</script><script>" not in head.replace('</script>\n<script type="application/ld+json">', "")
    blocks = [json.loads(b) for b in re.findall(r'<script type="application/ld\+json">(.*?)</script>', head)]
    assert blocks[0]["@type"] == "BreadcrumbList"
    assert blocks[0]["itemListElement"][-1]["item"] == "https://example.org/sub/questions/x/"
    assert blocks[1]["headline"] == "</script><script>alert(1)</script>"


def test_breadcrumbs_visible_and_structured_agree(pages: dict[str, Page]) -> None:
    page = pages["companies/xai/kv-cache.md"]
    crumbs = page.meta.crumbs
    assert [c[0] for c in crumbs] == ["Home", "Companies", "xAI (SpaceXSI)", "KV Cache & Memory"]
    md = crumbs_markdown(page.meta.path, crumbs)
    assert "[Home](../../index.md) › [Companies](../index.md) › [xAI (SpaceXSI)](index.md) › " in md
    data = breadcrumb_list(crumbs, Settings())
    assert [i["name"] for i in data["itemListElement"]] == [c[0] for c in crumbs]
    assert jsonld_script(data).startswith('<script type="application/ld+json">{')


def test_hub_item_lists_follow_page_order(pages: dict[str, Page]) -> None:
    page = pages["topics/kv-cache.md"]
    (item_list,) = page.meta.jsonld
    urls = [i["url"] for i in item_list["itemListElement"]]
    linked = re.findall(r"\]\(\.\./questions/([a-z0-9-]+)\.md\)", page.markdown)
    assert urls == [f"https://qbank.example/questions/{s}/" for s in linked]


def test_settings_from_config() -> None:
    s = settings_from("https://x.test", {"qbank": {"paywall": True, "ct_min_tagged": 3, "keyslots": "x"}})
    assert s.paywall and s.ct_min_tagged == 3 and s.base == "https://x.test/"
    assert settings_from(None, None) == Settings()


def test_fit_takes_the_first_candidate_that_fits_whole() -> None:
    assert fit(("a" * 70, "b" * 10), 60) == "b" * 10
    assert fit(("x" * 5, "y" * 80), 160, 70) == "y" * 80
    # nothing fits: the last one, whole, for the built-site check to report (never cut mid-word)
    assert fit(("word " * 40, "more " * 50), 60) == ("more " * 50).strip()
