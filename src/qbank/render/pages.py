"""Every generated page of the site, in order (``Page`` and ``make_page`` live in ``common``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..corpus import Corpus
from ..practice.pyodide import served_bytes
from . import companies, concepts, contact, hubs, practice, pricing, question
from .common import Page
from .derivation import latest
from .settings import Settings

__all__ = ["Page", "PageMemo", "listing_inputs", "render_pages"]


@dataclass
class PageMemo:
    """Generated pages kept between renders of one process (`qbank serve` renders every page on each save).

    A question page reads its own answer and derivation, and of the rest of the corpus only the questions, the
    catalog, the settings and the dates (titles, tracks, related questions, company links). While that shared part
    is equal to the last render's, a page whose answer text and derivation are unchanged is the page rendered last
    time; any change to the shared part renders every question page again.

    Every other page (home, topic, company, company×topic and concept pages, pricing, contact, practice) reads the
    same shared part plus what :func:`listing_inputs` returns, never an answer's prose: while both are equal to
    the last render's, they are the pages rendered last time.
    """

    shared: object = None
    questions: dict[str, tuple[object, Page]] = field(default_factory=dict)
    listings: tuple[object, list[Page], list[Page]] | None = None
    """The key of the other pages, and those pages before and after the question pages (in site order)."""
    rendered: int = 0
    """Question pages the last render actually rendered."""
    listings_rendered: int = 0
    """Other pages the last render actually rendered (0 when they were kept)."""


def listing_inputs(corpus: Corpus, settings: Settings) -> object:
    """What the pages other than question pages read besides the questions, catalog, settings and dates.

    The pricing page counts premium sections (from the answers' structure, not their prose) and verification
    scripts; the practice pages and every hub's practice links read the practice bank, whose keys are values of
    the verification records; a drill page shows the vendored Pyodide's size.
    """
    bank = practice.bank_for(corpus)
    return (
        pricing.included(corpus) if settings.shop is not None else None,
        bank,
        served_bytes(corpus.root) if bank.drills else None,
    )


def render_pages(
    corpus: Corpus,
    settings: Settings | None = None,
    lastmod: dict[str, str] | None = None,
    memo: PageMemo | None = None,
) -> list[Page]:
    """Every generated page of the site, in a stable order (pages reused from ``memo`` where current)."""
    s = settings or Settings()
    dates = lastmod or {}
    listings: tuple[list[Page], list[Page]] | None = None
    if memo is not None:
        shared = (corpus.root, corpus.questions, corpus.topics, corpus.companies, corpus.concepts, s, s.shop,
                  s.seal_token, dates)
        if memo.shared != shared:
            memo.shared, memo.questions, memo.listings = shared, {}, None
        memo.rendered = memo.listings_rendered = 0
        key = listing_inputs(corpus, s)
        if memo.listings is not None and memo.listings[0] == key:
            listings = memo.listings[1], memo.listings[2]
        else:
            listings = _head(corpus, s), _tail(corpus, s)
            memo.listings = (key, *listings)
            memo.listings_rendered = len(listings[0]) + len(listings[1])
    head, tail = listings or (_head(corpus, s), _tail(corpus, s))
    questions = [_question_page(corpus, slug, s, dates, memo) for slug in sorted(corpus.questions)]
    return [*head, *questions, *tail]


def _head(corpus: Corpus, s: Settings) -> list[Page]:
    """The pages before the question pages: home, indexes, topic, company and company×topic pages."""
    pages = [hubs.home(corpus, s), hubs.topics_index(corpus, s), companies.companies_index(corpus, s)]
    pages += [hubs.topic_page(corpus, slug, s) for slug in sorted(corpus.topics, key=lambda t: corpus.topics[t].order)]
    for slug in corpus.companies:
        pages.append(companies.company_page(corpus, slug, s))
        pages += [companies.company_topic_page(corpus, slug, t, s) for t in hubs.company_topics(corpus, slug, s)]
    return pages


def _tail(corpus: Corpus, s: Settings) -> list[Page]:
    """The pages after the question pages: concepts, pricing and contact, practice."""
    pages = [concepts.concept_page(corpus, slug, s) for slug in sorted(corpus.concepts)]
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
