"""Concept pages and the pricing page."""

from __future__ import annotations

from ..corpus import Corpus
from .common import (
    HOME,
    TOPICS,
    Page,
    concept_path,
    free_count,
    make_page,
    question_items,
    question_path,
)
from .hubs import CATALOG_CONCEPTS
from .seo import PageMeta, item_list
from .settings import Settings
from .text import counts


def concept_page(corpus: Corpus, slug: str, settings: Settings) -> Page:
    """A concept: its summary and the questions that teach it."""
    c = corpus.concepts[slug]
    src = concept_path(slug)
    slugs = sorted(
        (s for s, q in corpus.questions.items() if slug in q.concepts),
        key=lambda s: (corpus.questions[s].difficulty, corpus.questions[s].editorial_rank, s),
    )
    body = [
        f"# {c.title}",
        "",
        c.summary,
        "{: .qb-lead }",
        "",
        *([c.explanation.strip(), ""] if c.explanation.strip() else []),
        "## Questions that use it",
        "",
        counts(len(slugs), free_count(corpus, slugs)),
        "",
        question_items(corpus, src, slugs),
    ]
    meta = PageMeta(
        path=src,
        title=c.short_title,
        description=c.description,
        crumbs=(("Home", HOME), ("Topics", TOPICS), (c.title, src)),
        jsonld=(item_list(f"Questions on {c.title}", [(corpus.questions[s].title, question_path(s)) for s in slugs],
                          settings),),
        kind="concept",
        # a concept page earns a place in search with an explanation of its own; until then it is for readers only
        indexable=bool(c.explanation.strip()),
        sources=(CATALOG_CONCEPTS, *(corpus.question_path(s) for s in slugs)),
    )
    return make_page(meta, "\n".join(body))

