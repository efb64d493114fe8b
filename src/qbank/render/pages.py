"""Every generated page of the site, in order (``Page`` and ``make_page`` live in ``common``)."""

from __future__ import annotations

from ..corpus import Corpus
from . import companies, concepts, contact, hubs, practice, pricing, question
from .common import Page
from .settings import Settings

__all__ = ["Page", "render_pages"]


def render_pages(corpus: Corpus, settings: Settings | None = None, lastmod: dict[str, str] | None = None) -> list[Page]:
    """Every generated page of the site, in a stable order."""
    s = settings or Settings()
    dates = lastmod or {}
    pages = [hubs.home(corpus, s), hubs.topics_index(corpus, s), companies.companies_index(corpus, s)]
    pages += [hubs.topic_page(corpus, slug, s) for slug in sorted(corpus.topics, key=lambda t: corpus.topics[t].order)]
    for slug in corpus.companies:
        pages.append(companies.company_page(corpus, slug, s))
        pages += [companies.company_topic_page(corpus, slug, t, s) for t in hubs.company_topics(corpus, slug, s)]
    pages += [question.question_page(corpus, slug, s, dates) for slug in sorted(corpus.questions)]
    pages += [concepts.concept_page(corpus, slug, s) for slug in sorted(corpus.concepts)]
    if s.shop is not None:  # the hooks refuse a build without site_src/shop.yaml
        pages += [pricing.pricing_page(corpus, s), contact.contact_page(s.shop)]
    pages += practice.practice_pages(corpus, s)
    return pages
