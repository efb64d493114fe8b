"""Structural check of every built page: one h1, unique title and description, canonical, JSON-LD."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from bs4 import BeautifulSoup, Tag

from ..problems import Problem, error

SKIP_DIRS = ("assets/", "search/")
NOT_FOUND = "404.html"


@dataclass(frozen=True)
class Parsed:
    """One built page, parsed."""

    rel: str
    url: str
    soup: BeautifulSoup


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
        out.append(Parsed(rel, page_url(rel), BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")))
    return out


def text_of(tag: Tag) -> str:
    """Visible text of an element, permalink anchors dropped, whitespace collapsed."""
    clone = BeautifulSoup(str(tag), "html.parser")
    for a in clone.select(".headerlink"):
        a.decompose()
    return " ".join(clone.get_text(" ").split())


def _jsonld(page: Parsed, site: str) -> tuple[list[dict[str, Any]], list[Problem]]:
    blocks: list[dict[str, Any]] = []
    problems: list[Problem] = []
    for script in page.soup.find_all("script", type="application/ld+json"):
        try:
            data = json.loads(script.string or "")
        except json.JSONDecodeError as exc:
            problems.append(error(site + page.rel, 0, 0, "jsonld-invalid", f"JSON-LD does not parse: {exc}"))
            continue
        if isinstance(data, dict):
            blocks.append(data)
        else:
            problems.append(error(site + page.rel, 0, 0, "jsonld-invalid", "JSON-LD must be an object"))
    return blocks, problems


def _check_jsonld(page: Parsed, base: str, h1: str, description: str, path: str) -> list[Problem]:
    blocks, problems = _jsonld(page, "")
    problems = [error(path, 0, 0, p.code, p.message) for p in problems]

    def bad(code: str, message: str) -> None:
        problems.append(error(path, 0, 0, code, message))

    types = [b.get("@type") for b in blocks]
    if "QAPage" in types:
        bad("jsonld-qapage", "QAPage markup is not used on this site")
    crumbs = [b for b in blocks if b.get("@type") == "BreadcrumbList"]
    if len(crumbs) != 1:
        bad("jsonld-breadcrumbs", f"expected one BreadcrumbList, found {len(crumbs)}")
    else:
        names = [str(i.get("name")) for i in crumbs[0].get("itemListElement", [])]
        nav = page.soup.select_one("nav.qb-crumbs")
        visible = [text_of(t) for t in nav.select("a, span[aria-current]")] if nav else []
        if names != visible:
            bad("jsonld-mismatch", f"BreadcrumbList {names} does not match the visible breadcrumbs {visible}")
        last = crumbs[0].get("itemListElement", [{}])[-1].get("item")
        if last != base + page.url:
            bad("jsonld-mismatch", f"the last breadcrumb points to {last}, not to this page")
    content = page.soup.select_one("article") or page.soup
    links = {urljoin(base + page.url, str(a.get("href", ""))).split("#")[0] for a in content.find_all("a", href=True)}
    for block in blocks:
        kind = block.get("@type")
        if kind == "TechArticle":
            if block.get("headline") != h1:
                bad("jsonld-mismatch", f"TechArticle headline {block.get('headline')!r} is not the h1 {h1!r}")
            if block.get("description") != description:
                bad("jsonld-mismatch", "TechArticle description is not the meta description")
            for part in block.get("hasPart", []):
                selector = str(part.get("cssSelector", ""))
                if not page.soup.select(selector):
                    bad("jsonld-mismatch", f"hasPart selector {selector!r} matches nothing on the page")
            if block.get("isAccessibleForFree") is False and "hasPart" not in block:
                bad("jsonld-mismatch", "a premium TechArticle needs hasPart for its premium parts")
        elif kind == "ItemList":
            for item in block.get("itemListElement", []):
                if item.get("url") not in links:
                    bad("jsonld-mismatch", f"ItemList entry {item.get('url')} is not linked from the page")
    return problems


def check_structure(site_dir: Path, site_url: str, pages: list[Parsed] | None = None) -> list[Problem]:
    """One h1, title and description present and unique, canonical absolute and self, JSON-LD consistent."""
    base = site_url.rstrip("/") + "/"
    prefix = site_dir.name + "/"
    problems: list[Problem] = []
    titles: dict[str, list[str]] = defaultdict(list)
    descriptions: dict[str, list[str]] = defaultdict(list)
    for page in pages if pages is not None else html_pages(site_dir):
        path = prefix + page.rel
        h1s = page.soup.find_all("h1")
        if len(h1s) != 1:
            problems.append(error(path, 0, 0, "page-h1", f"expected one h1, found {len(h1s)}"))
        title = page.soup.title.get_text().strip() if page.soup.title else ""
        meta = page.soup.find("meta", attrs={"name": "description"})
        description = str(meta.get("content", "")).strip() if isinstance(meta, Tag) else ""
        if not title:
            problems.append(error(path, 0, 0, "title-missing", "the page has no <title>"))
        if not description:
            problems.append(error(path, 0, 0, "description-missing", "the page has no meta description"))
        if page.rel == NOT_FOUND:
            continue  # served for every missing URL: no canonical, not indexed, not compared
        titles[title].append(path)
        descriptions[description].append(path)
        link = page.soup.find("link", rel="canonical")
        canonical = str(link.get("href", "")) if isinstance(link, Tag) else ""
        if canonical != base + page.url:
            problems.append(
                error(path, 0, 0, "canonical-bad", f"canonical is {canonical!r}, expected {base + page.url!r}")
            )
        h1 = text_of(h1s[0]) if h1s else ""
        problems += _check_jsonld(page, base, h1, description, path)
    for what, seen in (("title", titles), ("description", descriptions)):
        for value, paths in seen.items():
            if value and len(paths) > 1:
                for p in paths:
                    others = ", ".join(q for q in paths if q != p)
                    problems.append(error(p, 0, 0, f"{what}-duplicate", f"{what} {value!r} is also used by {others}"))
    return problems
