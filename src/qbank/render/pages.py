"""Every generated page of the site, in order (``Page`` and ``make_page`` live in ``common``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..corpus import Corpus
from . import companies, concepts, contact, hubs, practice, pricing, question
from .common import Page
from .derivation import latest
from .settings import Settings

__all__ = ["Page", "PageMemo", "render_pages"]


@dataclass
class PageMemo:
    """Question pages kept between renders of one process (`qbank serve` renders every page on each save).

    A question page reads its own answer and derivation, and of the rest of the corpus only the questions, the
    catalog, the settings and the dates (titles, tracks, related questions, company links). While that shared part
    is equal to the last render's, a page whose answer text and derivation are unchanged is the page rendered last
    time; any change to the shared part renders every question page again.
    """

    shared: object = None
    questions: dict[str, tuple[object, Page]] = field(default_factory=dict)
    rendered: int = 0
    """Question pages the last render actually rendered."""


def render_pages(
    corpus: Corpus,
    settings: Settings | None = None,
    lastmod: dict[str, str] | None = None,
    memo: PageMemo | None = None,
) -> list[Page]:
    """Every generated page of the site, in a stable order (question pages reused from ``memo`` where current)."""
    s = settings or Settings()
    dates = lastmod or {}
    if memo is not None:
        shared = (corpus.root, corpus.questions, corpus.topics, corpus.companies, corpus.concepts, s, s.shop,
                  s.seal_token, dates)
        if memo.shared != shared:
            memo.shared, memo.questions = shared, {}
        memo.rendered = 0
    pages = [hubs.home(corpus, s), hubs.topics_index(corpus, s), companies.companies_index(corpus, s)]
    pages += [hubs.topic_page(corpus, slug, s) for slug in sorted(corpus.topics, key=lambda t: corpus.topics[t].order)]
    for slug in corpus.companies:
        pages.append(companies.company_page(corpus, slug, s))
        pages += [companies.company_topic_page(corpus, slug, t, s) for t in hubs.company_topics(corpus, slug, s)]
    pages += [_question_page(corpus, slug, s, dates, memo) for slug in sorted(corpus.questions)]
    pages += [concepts.concept_page(corpus, slug, s) for slug in sorted(corpus.concepts)]
    if s.shop is not None:  # the hooks refuse a build without site_src/shop.yaml
        pages += [pricing.pricing_page(corpus, s), contact.contact_page(s.shop)]
    pages += practice.practice_pages(corpus, s)
    return pages


def _question_page(corpus: Corpus, slug: str, s: Settings, dates: dict[str, str], memo: PageMemo | None) -> Page:
    if memo is None:
        return question.question_page(corpus, slug, s, dates)
    answer = corpus.answers.get(slug)
    own = (answer.path, answer.text) if answer is not None else None, latest(corpus.root, slug)
    kept = memo.questions.get(slug)
    if kept is not None and kept[0] == own:
        return kept[1]
    page = question.question_page(corpus, slug, s, dates)
    memo.questions[slug] = (own, page)
    memo.rendered += 1
    return page
