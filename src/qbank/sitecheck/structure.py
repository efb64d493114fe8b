"""Structural check of every built page: one h1, unique title and description, canonical, JSON-LD."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import lxml.html
from lxml.html import HtmlElement

from ..model import DESCRIPTION_MAX, DESCRIPTION_MIN, SHORT_TITLE_MAX
from ..problems import Problem, error

SKIP_DIRS = ("assets/", "pagefind/")
NOT_FOUND = "404.html"


@dataclass(frozen=True)
class Parsed:
    """One built page, parsed."""

    rel: str
    url: str
    tree: HtmlElement


def page_url(rel: str) -> str:
    """Site-relative URL of a built file (``topics/x/index.html`` -> ``topics/x/``)."""
    return rel[: -len("index.html")] if rel.endswith("index.html") else rel


def html_pages(site_dir: Path) -> list[Parsed]:
    """Every content page of the site (theme assets and the search index excluded), parsed once."""
    out = []
    for path in sorted(site_dir.rglob("*.html")):
        rel = path.relative_to(site_dir).as_posix()
        if rel.startswith(SKIP_DIRS):
            continue
        out.append(Parsed(rel, page_url(rel), lxml.html.fromstring(path.read_bytes())))
    return out


def by_class(name: str) -> str:
    """XPath for elements carrying a class."""
    return f"//*[contains(concat(' ', normalize-space(@class), ' '), ' {name} ')]"


def text_of(el: HtmlElement) -> str:
    """Visible text of an element, permalink anchors dropped, whitespace collapsed."""
    parts = [t for t in el.xpath(".//text()[not(ancestor::*[contains(@class, 'headerlink')])]")]
    return " ".join("".join(parts).split())


def _jsonld(tree: HtmlElement) -> tuple[list[dict[str, Any]], list[str]]:
    blocks: list[dict[str, Any]] = []
    bad: list[str] = []
    for script in tree.xpath("//script[@type='application/ld+json']"):
        try:
            data = json.loads(script.text or "")
        except json.JSONDecodeError as exc:
            bad.append(f"JSON-LD does not parse: {exc}")
            continue
        if isinstance(data, dict):
            blocks.append(data)
        else:
            bad.append("JSON-LD must be an object")
    return blocks, bad


def _check_jsonld(page: Parsed, base: str, h1: str, description: str, path: str) -> list[Problem]:
    blocks, bad_json = _jsonld(page.tree)
    problems = [error(path, 0, 0, "jsonld-invalid", msg) for msg in bad_json]

    def bad(code: str, message: str) -> None:
        problems.append(error(path, 0, 0, code, message))

    if any(b.get("@type") == "QAPage" for b in blocks):
        bad("jsonld-qapage", "QAPage markup is not used on this site")
    crumbs = [b for b in blocks if b.get("@type") == "BreadcrumbList"]
    if len(crumbs) != 1:
        bad("jsonld-breadcrumbs", f"expected one BreadcrumbList, found {len(crumbs)}")
    else:
        items = crumbs[0].get("itemListElement") or [{}]
        names = [str(i.get("name")) for i in items]
        shown = page.tree.xpath("//nav[contains(@class, 'qb-crumbs')]//*[self::a or @aria-current]")
        visible = [text_of(t) for t in shown]
        if names != visible:
            bad("jsonld-mismatch", f"BreadcrumbList {names} does not match the visible breadcrumbs {visible}")
        if items[-1].get("item") != base + page.url:
            bad("jsonld-mismatch", f"the last breadcrumb points to {items[-1].get('item')}, not to this page")
    here = base + page.url
    links = {urljoin(here, str(href)).split("#")[0] for href in page.tree.xpath("//article//a/@href")}
    for block in blocks:
        kind = block.get("@type")
        if kind == "TechArticle":
            if block.get("headline") != h1:
                bad("jsonld-mismatch", f"TechArticle headline {block.get('headline')!r} is not the h1 {h1!r}")
            if block.get("description") != description:
                bad("jsonld-mismatch", "TechArticle description is not the meta description")
            for part in block.get("hasPart", []):
                selector = str(part.get("cssSelector", ""))
                if not selector.startswith(".") or not page.tree.xpath(by_class(selector[1:])):
                    bad("jsonld-mismatch", f"hasPart selector {selector!r} matches nothing on the page")
            if block.get("isAccessibleForFree") is False and "hasPart" not in block:
                bad("jsonld-mismatch", "a premium TechArticle needs hasPart for its premium parts")
        elif kind == "ItemList":
            for item in block.get("itemListElement", []):
                if item.get("url") not in links:
                    bad("jsonld-mismatch", f"ItemList entry {item.get('url')} is not linked from the page")
    return problems


def _first(tree: HtmlElement, xpath: str) -> str:
    found = tree.xpath(xpath)
    return str(found[0]).strip() if found else ""


def check_structure(site_dir: Path, site_url: str, pages: list[Parsed] | None = None) -> list[Problem]:
    """One h1, title and description present and unique, canonical absolute and self, JSON-LD consistent."""
    base = site_url.rstrip("/") + "/"
    prefix = site_dir.name + "/"
    problems: list[Problem] = []
    titles: dict[str, list[str]] = defaultdict(list)
    descriptions: dict[str, list[str]] = defaultdict(list)
    for page in pages if pages is not None else html_pages(site_dir):
        path = prefix + page.rel
        h1s = page.tree.xpath("//h1")
        if len(h1s) != 1:
            problems.append(error(path, 0, 0, "page-h1", f"expected one h1, found {len(h1s)}"))
        title = _first(page.tree, "//head/title/text()")
        description = _first(page.tree, "//head/meta[@name='description']/@content")
        if not title:
            problems.append(error(path, 0, 0, "title-missing", "the page has no <title>"))
        elif len(title) > SHORT_TITLE_MAX:
            problems.append(error(path, 0, 0, "title-length",
                                  f"<title> is {len(title)} characters; search results show about {SHORT_TITLE_MAX}"))
        if not description:
            problems.append(error(path, 0, 0, "description-missing", "the page has no meta description"))
        elif not DESCRIPTION_MIN <= len(description) <= DESCRIPTION_MAX or description.endswith(("…", "...")):
            problems.append(error(path, 0, 0, "description-length",
                                  f"the meta description is {len(description)} characters; it must be "
                                  f"{DESCRIPTION_MIN}-{DESCRIPTION_MAX}, whole words, no ellipsis"))
        if page.rel == NOT_FOUND:
            continue  # served for every missing URL: no canonical, not indexed, not compared
        titles[title].append(path)
        descriptions[description].append(path)
        canonical = _first(page.tree, "//head/link[@rel='canonical']/@href")
        if canonical != base + page.url:
            problems.append(
                error(path, 0, 0, "canonical-bad", f"canonical is {canonical!r}, expected {base + page.url!r}")
            )
        problems += _check_jsonld(page, base, text_of(h1s[0]) if h1s else "", description, path)
    for what, seen in (("title", titles), ("description", descriptions)):
        for value, paths in seen.items():
            if value and len(paths) > 1:
                for p in paths:
                    others = ", ".join(q for q in paths if q != p)
                    problems.append(error(p, 0, 0, f"{what}-duplicate", f"{what} {value!r} is also used by {others}"))
    return problems
