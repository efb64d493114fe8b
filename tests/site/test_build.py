"""Whole-build tests on the fixture corpus: page types, no premium plaintext, counts, sitemap, checks."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from qbank.build import BuildResult, build_site
from qbank.corpus import load_corpus
from qbank.deploy.headers import csp_for_site
from qbank.render.search import build_search_index
from qbank.render.text import strip_markers
from qbank.sitecheck import check_site

from ..search.pagefind_files import meaning
from .conftest import CASES

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("site")]
SITE_URL = "https://qbank.example/"


def soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def test_build_is_clean_with_every_check(built: BuildResult) -> None:
    assert built.site_dir is not None
    assert [p.text() for p in built.report.problems] == []


def test_every_page_type_is_built(site: Path) -> None:
    for rel in (
        "index.html",
        "topics/index.html",
        "topics/kv-cache/index.html",
        "companies/index.html",
        "companies/xai/index.html",
        "companies/xai/kv-cache/index.html",
        "questions/kv-fp8/index.html",
        "concepts/kv-cache/index.html",
        "pricing/index.html",
        "about/index.html",
        "404.html",
        "sitemap.xml",
        "robots.txt",
        "search/index.html",
        "pagefind/pagefind.js",
    ):
        assert (site / rel).is_file(), rel
    assert not (site / "companies/xai/speculative-decoding").exists()  # one tagged question: below threshold
    nav = soup(site / "index.html").select(".md-nav--primary > .md-nav__list > .md-nav__item")
    labels = [" ".join(li.select_one(".md-nav__link").get_text().split()) for li in nav]
    assert labels == ["Home", "Topics", "Companies", "Pricing"]  # search is in the header


def test_every_page_has_its_social_card(site: Path) -> None:
    pages = [p for p in site.rglob("index.html") if "assets" not in p.parts and "pagefind" not in p.parts]
    assert len(pages) > 15
    for path in pages:
        page = soup(path)
        image = page.find("meta", property="og:image")
        assert image is not None, path
        card = site / str(image["content"]).removeprefix(SITE_URL)
        assert card.is_file() and card.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", card
        assert page.find("meta", attrs={"name": "twitter:card"})["content"] == "summary_large_image"
        assert page.find("meta", attrs={"name": "twitter:image"})["content"] == image["content"]


def test_the_search_index_built_page_by_page_means_what_pagefind_writes_over_the_site(site: Path,
                                                                                     tmp_path: Path) -> None:
    copy = tmp_path / "site"
    shutil.copytree(site, copy, ignore=shutil.ignore_patterns("pagefind"))
    assert build_search_index(copy) is None  # Pagefind's own command over the written pages
    built, walked = meaning(site / "pagefind"), meaning(copy / "pagefind")
    assert built == walked
    bodies = [p for p in site.rglob("*.html") if "data-pagefind-body" in p.read_text("utf-8")]
    assert len(built["pages"]) == len(bodies) > 15 and "kv" in built["words"]


def test_the_header_policy_holds_the_hashes_of_every_written_page(site: Path) -> None:
    header = next(line.strip() for line in (site / "_headers").read_text().splitlines()
                  if line.strip().startswith("Content-Security-Policy:"))
    assert header == "Content-Security-Policy: " + csp_for_site(site)  # every page read back from disk


def test_chrome_header_search_footer_and_own_title(site: Path) -> None:
    page = soup(site / "questions/kv-fp8/index.html")
    form = page.select_one("header form[role=search]")
    assert form is not None and form["action"] == "../../search/" and form.select_one("input[name=q]")
    label = page.select_one("label[for=qb-header-q]")
    assert label is not None and label.get_text(strip=True)
    topic = page.select_one("[data-md-component=header-topic]")
    assert topic is not None and " ".join(topic.get_text().split()) == "Test question kv-fp8"
    links = [a.get_text(strip=True) for a in page.select("footer .qb-footer__links a")]
    assert links == ["About", "Pricing", "Contact", "Terms", "Privacy", "Search"]
    for rel in ("contact/index.html", "terms/index.html", "privacy/index.html"):
        assert (site / rel).is_file(), rel
    assert "Material for MkDocs" not in str(page.select_one("footer a[href*=squidfunk]") or "")
    body = page.select_one("[data-pagefind-body]")
    assert body is not None and body["data-pagefind-meta"] == "type:Question"
    assert soup(site / "concepts/kv-cache/index.html").select_one("[data-pagefind-body]")["data-pagefind-filter"] == (
        "type:Concept"
    )


def test_no_premium_plaintext_in_any_file(site: Path) -> None:
    corpus, _ = load_corpus(CASES / "site")
    secrets = [
        strip_markers(line).strip()
        for answer in corpus.answers.values()
        for section in answer.premium
        for line in section.markdown.splitlines()[1:]
        if len(line.strip()) > 20
    ]
    assert len(secrets) == 5
    fragments = list((site / "pagefind" / "fragment").glob("*.pf_fragment"))
    assert len(fragments) >= 15
    assert any(b"Draft-and-verify algebra" in gzip.decompress(f.read_bytes()) for f in fragments)
    for path in site.rglob("*"):
        if path.suffix.startswith(".pf_"):  # Pagefind's gzipped index chunks
            text = gzip.decompress(path.read_bytes()).decode("utf-8", errors="replace")
            for secret in secrets:
                assert secret[:40] not in text, f"premium text in {path}"
        if path.is_file() and path.suffix in {".html", ".json", ".xml", ".js", ".txt", ".css"}:
            text = path.read_text(encoding="utf-8", errors="replace")
            for secret in secrets:
                assert secret[:40] not in text, f"premium text in {path}"
            assert not re.search(r"\{[=!][a-z_ ]", text) or path.name.endswith(".js"), path


def test_counts_match_rendered_lists(site: Path) -> None:
    corpus, _ = load_corpus(CASES / "site")
    seen = 0
    for rel in ("topics/kv-cache/index.html", "companies/xai/index.html", "companies/xai/kv-cache/index.html"):
        page = soup(site / rel)
        for counts in page.select(".qb-counts"):
            span = counts.select_one(".qb-unlock-count")
            assert span is not None
            listing = counts.find_next("ul")
            assert listing is not None
            slugs = [re.sub(r".*/questions/([^/]+)/$", r"\1", str(li.a["href"])) for li in listing.find_all("li")]
            assert int(str(span["data-qb-unlock-count"])) == len(slugs)
            assert str(span["data-qb-free"]) == span.get_text()
            assert int(span.get_text()) == sum(corpus.questions[s].access == "free" for s in slugs)
            assert counts.get_text().startswith(f"{len(slugs)} question")
            seen += 1
    assert seen == 4


def test_question_page_markup(site: Path) -> None:
    page = soup(site / "questions/kv-fp8/index.html")
    blocks = [json.loads(s.string or "") for s in page.find_all("script", type="application/ld+json")]
    article = next(b for b in blocks if b["@type"] == "TechArticle")
    assert article["isAccessibleForFree"] is False
    assert article["dateModified"] == "2026-11-02"
    # the answer's two premium sections, then the executed derivation: premium on a premium question
    sealed = page.select(article["hasPart"][0]["cssSelector"])
    assert [s.get("class") for s in sealed] == [["qb-premium", "qb-locked"]] * 3
    assert [s.h2.get_text() for s in sealed] == ["Rounding against clipping", "Where the failures hide",
                                                "Executed derivation"]
    assert page.find("meta", property="og:type")["content"] == "article"
    assert "QAPage" not in str(page)
    free = soup(site / "questions/spec-speedup/index.html")
    assert free.select(".arithmatex math"), "math is MathML, typeset at build time"
    assert not any("\\(" in el.get_text() or "\\[" in el.get_text() for el in free.select(".arithmatex"))
    assert not free.find("script", src=re.compile("katex|mathjax", re.I))
    assert not free.select(".qb-premium")
    code = soup(site / "questions/kv-per-request/index.html").select(".highlight code")
    assert code and code[0].select("span.k"), "code blocks are highlighted"


def test_free_derivation_is_folded_but_served(site: Path) -> None:
    """A free question's derivation: heading and legend shown, the script in a closed fold, in the HTML."""
    page = soup(site / "questions/kv-per-request/index.html")
    heading = page.find("h2", id="executed-derivation")
    assert heading is not None
    legend = heading.find_next_sibling()
    assert legend.name == "p" and legend.get("class") == ["qb-legend"] and "given" in legend.get_text()
    fold = legend.find_next_sibling()
    assert fold.name == "details" and fold.get("class") == ["qb-derivation"] and not fold.has_attr("open")
    assert fold.summary is not None and fold.summary.get_text(strip=True)
    assert fold.select(".highlight code span"), "the script itself is in the served HTML, highlighted"
    # a premium question's derivation stays one sealed section, with no fold outside the seal
    assert not soup(site / "questions/kv-fp8/index.html").select("details.qb-derivation")
    not_found = soup(site / "404.html")
    assert not_found.find("meta", attrs={"name": "robots"})["content"] == "noindex"


def test_sitemap_lists_indexable_pages_with_git_dates_and_is_stable(site: Path, site_repo: Path,
                                                                   tmp_path: Path) -> None:
    xml = (site / "sitemap.xml").read_text()
    locs = re.findall(r"<loc>(.*?)</loc>", xml)
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("index.html") if "assets" not in p.parts)
    noindex = {p for p in pages if 'name="robots" content="noindex"' in (site / p).read_text()}
    # concepts without an explanation are noindex and out of the sitemap; search (what the index covers) and
    # contact are pages with text of their own, though search is not a result of its own search
    assert "concepts/kv-cache/index.html" in noindex
    assert not {"search/index.html", "contact/index.html"} & noindex
    assert sorted(locs) == sorted(SITE_URL + p.removesuffix("index.html") for p in pages if p not in noindex)
    assert set(re.findall(r"<lastmod>(.*?)</lastmod>", xml)) == {"2026-11-02"}
    assert "404" not in xml
    again = build_site(site_repo, tmp_path / "again", links=False)
    assert again.site_dir is not None
    assert (again.site_dir / "sitemap.xml").read_bytes() == (site / "sitemap.xml").read_bytes()
    assert (site / "robots.txt").read_text().endswith(f"Sitemap: {SITE_URL}sitemap.xml\n")


def test_checks_catch_a_broken_site(site: Path, tmp_path: Path) -> None:
    broken = tmp_path / "site"
    shutil.copytree(site, broken)
    fp8 = broken / "questions/kv-fp8/index.html"
    html = fp8.read_text()
    html = html.replace("<h1 ", '<a href="../no-such-page/">x</a><h1>Second</h1><h1 ', 1)
    fp8.write_text(html)
    budget = broken / "questions/kv-budget/index.html"
    title = re.search(r"<title>.*?</title>", fp8.read_text())
    assert title is not None
    budget.write_text(re.sub(r"<title>.*?</title>", title.group(0), budget.read_text()))
    # an orphan: a page nothing links to
    shutil.copytree(broken / "about", broken / "lonely")
    codes = {(p.path, p.code) for p in check_site(broken, SITE_URL)}
    assert ("site/questions/kv-fp8/index.html", "link-broken") in codes
    assert ("site/questions/kv-fp8/index.html", "page-h1") in codes
    assert ("site/questions/kv-budget/index.html", "title-duplicate") in codes
    assert ("site/lonely/index.html", "page-orphan") in codes
    assert ("site/lonely/index.html", "canonical-bad") in codes
