"""Search metadata: titles, descriptions, canonical URLs, Open Graph, JSON-LD and breadcrumbs."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from ..model import SHORT_TITLE_MAX
from .settings import BRAND, Settings
from .templating import fragment
from .text import md_escape, rel, url_of

Crumb = tuple[str, str]
"""A breadcrumb: its visible name and the docs-relative Markdown path it points to."""


@dataclass(frozen=True)
class PageMeta:
    """Everything a page's ``<head>`` and the sitemap need, computed from free fields only."""

    path: str
    title: str
    description: str
    crumbs: tuple[Crumb, ...]
    jsonld: tuple[dict[str, Any], ...] = ()
    kind: str = "page"
    indexable: bool = True
    sources: tuple[str, ...] = ()
    """Repository-relative files whose last commit dates the page (sitemap ``lastmod``)."""
    extra: dict[str, Any] = field(default_factory=dict)

    def canonical(self, settings: Settings) -> str:
        """The absolute self-referencing URL."""
        return settings.base + url_of(self.path)


def absolute(settings: Settings, path: str) -> str:
    """Absolute URL of a docs-relative Markdown path."""
    return settings.base + url_of(path)


def breadcrumb_list(crumbs: tuple[Crumb, ...], settings: Settings) -> dict[str, Any]:
    """Schema.org BreadcrumbList matching the visible breadcrumbs."""
    return {
        "@context": "https://schema.org",
        "@type": "BreadcrumbList",
        "itemListElement": [
            {"@type": "ListItem", "position": i, "name": name, "item": absolute(settings, path)}
            for i, (name, path) in enumerate(crumbs, start=1)
        ],
    }


def item_list(name: str, items: list[tuple[str, str]], settings: Settings) -> dict[str, Any]:
    """Schema.org ItemList of a hub's links (name, docs-relative path), in page order."""
    return {
        "@context": "https://schema.org",
        "@type": "ItemList",
        "name": name,
        "numberOfItems": len(items),
        "itemListElement": [
            {"@type": "ListItem", "position": i, "name": title, "url": absolute(settings, path)}
            for i, (title, path) in enumerate(items, start=1)
        ],
    }


def crumbs_markdown(path: str, crumbs: tuple[Crumb, ...]) -> str:
    """Visible breadcrumbs: every ancestor is a link, the current page is plain text."""
    links = [(Markup(md_escape(name)), rel(path, target)) for name, target in crumbs[:-1]]
    return fragment("crumbs.md.j2", links=links, current_md=Markup(md_escape(crumbs[-1][0])))


SEARCH_LABELS = {"question": "Question", "topic": "Topic", "company": "Company", "company-topic": "Company",
                 "concept": "Concept"}
"""The type a search result is labelled with, by page kind; other pages are labelled "Page"."""


def search_label(kind: str) -> str:
    """The label of a page's search results: question, topic, concept or company."""
    return SEARCH_LABELS.get(kind, "Page")


def full_title(title: str) -> str:
    """The ``<title>``: the page's own title, then the brand when both fit what search results show."""
    branded = f"{title} · {BRAND}"
    return branded if len(branded) <= SHORT_TITLE_MAX else title


def jsonld_script(data: dict[str, Any]) -> str:
    """A JSON-LD script element; ``<`` is escaped so no text can close the script early."""
    return f'<script type="application/ld+json">{jsonld_text(data)}</script>'


def jsonld_text(data: dict[str, Any]) -> str:
    """JSON-LD as script text: ``<`` is escaped so no text can close the script early."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def card_path(page_path: str) -> str:
    """Site-relative path of a page's social card (``qbank.cards`` draws it after the build)."""
    stem = url_of(page_path).strip("/").replace("/", "-") or "home"
    return f"assets/cards/{stem}.png"


def head_html(meta: PageMeta, settings: Settings) -> str:
    """Open Graph, Twitter and JSON-LD tags for the page's ``<head>`` (title and description are the theme's)."""
    canonical = meta.canonical(settings)
    card = card_path(meta.path)
    return fragment(
        "head.html.j2",
        og_type="article" if meta.kind == "question" else "website",
        brand=BRAND,
        title=meta.title,
        description=meta.description,
        canonical=canonical,
        card=settings.base + card,
        indexable=meta.indexable,
        # JSON-LD is script text, not HTML: escaped as JSON (``<`` too), never as entities
        jsonld=[Markup(jsonld_text(d)) for d in (breadcrumb_list(meta.crumbs, settings), *meta.jsonld)],
    ).rstrip("\n")
