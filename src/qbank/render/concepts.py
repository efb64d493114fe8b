"""Concept pages and the pricing page."""

from __future__ import annotations

from ..corpus import Corpus
from .common import HOME, OFFER, PRICING, TOPICS, concept_path, faq, free_count, question_items, question_path
from .hubs import CATALOG_CONCEPTS, CATALOG_TOPICS
from .pages import Page, make_page
from .seo import PageMeta, item_list
from .settings import Settings
from .text import clip, counts, plural


def concept_page(corpus: Corpus, slug: str, settings: Settings) -> Page:
    """A concept: its summary and the questions that teach it."""
    c = corpus.concepts[slug]
    src = concept_path(slug)
    slugs = sorted(
        (s for s, q in corpus.questions.items() if slug in q.concepts),
        key=lambda s: (corpus.questions[s].difficulty, -corpus.questions[s].votes, s),
    )
    body = [
        f"# {c.title}",
        "",
        c.summary,
        "{: .qb-lead }",
        "",
        "## Questions that use it",
        "",
        counts(len(slugs), free_count(corpus, slugs)),
        "",
        question_items(corpus, src, slugs),
    ]
    meta = PageMeta(
        path=src,
        title=f"{c.title}: a concept for LLM inference interviews",
        description=clip(f"{c.title}: {c.summary}"),
        crumbs=(("Home", HOME), ("Topics", TOPICS), (c.title, src)),
        jsonld=(item_list(f"Questions on {c.title}", [(corpus.questions[s].title, question_path(s)) for s in slugs],
                          settings),),
        kind="concept",
        sources=(CATALOG_CONCEPTS, *(corpus.question_path(s) for s in slugs)),
    )
    return make_page(meta, "\n".join(body))


def pricing_page(corpus: Corpus, settings: Settings) -> Page:
    """What Premium unlocks, counted from the data, and how a license works."""
    slugs = list(corpus.questions)
    premium = len(slugs) - free_count(corpus, slugs)
    body = [
        "# Premium",
        "",
        f"**{OFFER}.**",
        "",
        f"Premium unlocks every worked answer and executed derivation: {plural(premium, 'premium question')} "
        f"today across {plural(len(corpus.topics), 'topic')}, and every one added during your six months.",
        "",
        counts(len(slugs), free_count(corpus, slugs)),
        "",
        "## How it works",
        "",
        "1. You buy once and receive a license key, shown one time: keep it.",
        "2. Enter the key on any premium section. Your browser decrypts the premium text locally; nothing is "
        "sent back.",
        "3. Six months after the sale date the key stops unlocking new releases. Nothing renews by itself.",
        "",
        "## Pricing FAQ",
        "",
        faq(
            [
                ("Is there a subscription?", "No. One payment covers six months; there is no auto-renewal."),
                (
                    "Can I try before buying?",
                    f"Yes: {plural(len(slugs) - premium, 'question')} are free in full, in every topic.",
                ),
            ]
        ),
    ]
    meta = PageMeta(
        path=PRICING,
        title="Premium: every worked answer for six months",
        description=clip(
            f"Premium unlocks {plural(premium, 'premium answer')} and every executed derivation for six months: "
            "one payment, no auto-renewal."
        ),
        crumbs=(("Home", HOME), ("Pricing", PRICING)),
        kind="pricing",
        sources=(CATALOG_TOPICS, *(corpus.question_path(s) for s in slugs)),
    )
    return make_page(meta, "\n".join(body))
