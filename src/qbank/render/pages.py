"""Generated pages as data: a docs-relative path, its Markdown (front matter included) and its metadata."""

from __future__ import annotations

from dataclasses import dataclass

from ..corpus import Corpus
from .seo import PageMeta, crumbs_markdown
from .settings import Settings
from .text import strip_markers, yaml_str


@dataclass(frozen=True)
class Page:
    """One generated page."""

    path: str
    markdown: str
    meta: PageMeta


def make_page(meta: PageMeta, body: str) -> Page:
    """Assemble front matter, visible breadcrumbs and the body (claim markers removed) into one page."""
    front = f"---\ndescription: {yaml_str(meta.description)}\n---\n\n"
    text = crumbs_markdown(meta.path, meta.crumbs) + "\n" + strip_markers(body).strip() + "\n"
    return Page(meta.path, front + text, meta)


def render_pages(corpus: Corpus, settings: Settings | None = None, lastmod: dict[str, str] | None = None) -> list[Page]:
    """Every generated page of the site, in a stable order."""
    from . import companies, concepts, hubs, practice, question

    s = settings or Settings()
    dates = lastmod or {}
    pages = [hubs.home(corpus, s), hubs.topics_index(corpus, s), companies.companies_index(corpus, s)]
    pages += [hubs.topic_page(corpus, slug, s) for slug in sorted(corpus.topics, key=lambda t: corpus.topics[t].order)]
    for slug in corpus.companies:
        pages.append(companies.company_page(corpus, slug, s))
        pages += [companies.company_topic_page(corpus, slug, t, s) for t in hubs.company_topics(corpus, slug, s)]
    pages += [question.question_page(corpus, slug, s, dates) for slug in sorted(corpus.questions)]
    pages += [concepts.concept_page(corpus, slug, s) for slug in sorted(corpus.concepts)]
    pages.append(concepts.pricing_page(corpus, s))
    pages += practice.practice_pages(corpus, s)
    return pages
