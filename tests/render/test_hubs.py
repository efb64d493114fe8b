"""Hub pages: counts come from the data, company×topic pages only where they have distinct content."""

from __future__ import annotations

import re

from qbank.corpus import Corpus
from qbank.render.hubs import company_topics, tagged, topic_order
from qbank.render.pages import Page, render_pages
from qbank.render.settings import Settings

COUNT_RE = re.compile(
    r'(\d+) questions? · <span class="qb-unlock-count" data-qb-unlock-count="(\d+)" data-qb-free="(\d+)">(\d+)</span>'
)


def sections(markdown: str) -> list[tuple[int, int, list[str]]]:
    """(total, free, linked question slugs) for each counts line and the list that follows it."""
    out = []
    for m in COUNT_RE.finditer(markdown):
        rest = markdown[m.end():]
        block = rest.split("\n## ", 1)[0]
        slugs = re.findall(r"\]\((?:\.\./)*questions/([a-z0-9-]+)\.md\)", block)
        assert int(m.group(1)) == int(m.group(2)) and m.group(3) == m.group(4)
        out.append((int(m.group(1)), int(m.group(3)), slugs))
    return out


def test_counts_match_the_rendered_lists(corpus: Corpus, pages: dict[str, Page]) -> None:
    checked = 0
    for path in ("topics/kv-cache.md", "topics/speculative-decoding.md", "companies/xai/index.md",
                 "companies/xai/kv-cache.md", "concepts/kv-cache.md"):
        for total, free, slugs in sections(pages[path].markdown):
            assert total == len(slugs), path
            assert free == sum(corpus.questions[s].access == "free" for s in slugs), path
            checked += 1
    assert checked == 6


def test_company_topic_page_orders_tagged_first_then_votes(corpus: Corpus, pages: dict[str, Page]) -> None:
    (n1, _f1, mine), (n2, _f2, more) = sections(pages["companies/xai/kv-cache.md"].markdown)
    assert mine == ["kv-per-request", "kv-block-waste"]  # 40 votes, 25 votes
    assert more == ["kv-budget", "kv-fp8"]  # 30 votes, 12 votes
    assert (n1, n2) == (2, 2)
    assert not set(mine) & set(more)


def test_topic_lists_easiest_first(corpus: Corpus, pages: dict[str, Page]) -> None:
    (_n, _f, slugs), = sections(pages["topics/kv-cache.md"].markdown)
    assert slugs == corpus.topic_questions("kv-cache")
    assert [corpus.questions[s].difficulty for s in slugs] == sorted(corpus.questions[s].difficulty for s in slugs)


def test_company_topic_threshold(corpus: Corpus) -> None:
    assert tagged(corpus, "xai", "speculative-decoding") == ["spec-speedup"]
    assert company_topics(corpus, "xai", Settings()) == ["kv-cache"]
    assert company_topics(corpus, "xai", Settings(ct_min_tagged=1)) == ["speculative-decoding", "kv-cache"]
    assert company_topics(corpus, "xai", Settings(ct_min_note_chars=500)) == []


def test_no_page_and_no_link_below_threshold(corpus: Corpus, pages: dict[str, Page]) -> None:
    assert "companies/xai/speculative-decoding.md" not in pages
    for page in pages.values():
        assert "xai/speculative-decoding.md" not in page.markdown, page.path
    # the company page's round for that topic links to the topic hub instead
    assert "[Speculative & Constrained Decoding](../../topics/speculative-decoding.md)" in (
        pages["companies/xai/index.md"].markdown
    )
    strict = {p.path for p in render_pages(corpus, Settings(ct_min_tagged=3))}
    assert not any(p.startswith("companies/xai/") and not p.endswith("index.md") for p in strict)


def test_titles_and_descriptions_unique(pages: dict[str, Page]) -> None:
    titles = [p.meta.title for p in pages.values()]
    descriptions = [p.meta.description for p in pages.values()]
    assert len(set(titles)) == len(titles)
    assert len(set(descriptions)) == len(descriptions)
    assert all(0 < len(d) <= 320 for d in descriptions)


def test_every_page_type_is_rendered(pages: dict[str, Page]) -> None:
    kinds = {p.meta.kind for p in pages.values()}
    assert kinds == {"home", "index", "topic", "company", "company-topic", "question", "concept", "pricing", "page"}
    assert {"index.md", "topics/index.md", "companies/index.md", "pricing.md"} <= set(pages)


def test_company_topic_page_only_where_it_differs_from_the_topic_page(corpus: Corpus) -> None:
    """A company tagged on every question of a topic gets no company×topic page: it would repeat the topic's list."""
    s = Settings(ct_min_tagged=1)
    assert company_topics(corpus, "xai", s) == ["speculative-decoding", "kv-cache"]
    for topic in company_topics(corpus, "xai", s):
        assert len(tagged(corpus, "xai", topic)) < len(topic_order(corpus, topic))
    every = {t for t in corpus.topics if set(topic_order(corpus, t)) <= set(tagged(corpus, "xai", t))}
    assert not every & set(company_topics(corpus, "xai", s))


def test_concept_page_is_indexable_only_with_an_explanation(corpus: Corpus, pages: dict[str, Page]) -> None:
    for slug, concept in corpus.concepts.items():
        meta = pages[f"concepts/{slug}.md"].meta
        assert meta.indexable == bool(concept.explanation.strip()), slug
