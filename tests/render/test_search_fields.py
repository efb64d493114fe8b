"""Titles and descriptions for search, on this repository's real content: every page has a short title and a
whole-word description of snippet length, all distinct, and the long question title stays the h1."""

from __future__ import annotations

import pytest

from qbank.corpus import Corpus, load_corpus
from qbank.model import DESCRIPTION_MAX, DESCRIPTION_MIN, SHORT_TITLE_MAX
from qbank.offer.model import Shop
from qbank.render.pages import Page, render_pages
from qbank.render.seo import full_title
from qbank.render.settings import Settings

from ..conftest import REPO


@pytest.fixture(scope="module")
def real_corpus() -> Corpus:
    corpus, report = load_corpus(REPO)
    assert report.errors == 0, [p.text() for p in report.problems]
    return corpus


@pytest.fixture(scope="module")
def real_pages(real_corpus: Corpus, shop: Shop) -> list[Page]:
    return render_pages(real_corpus, Settings(shop=shop))


def test_every_page_has_a_short_title_and_a_snippet_description(real_pages: list[Page]) -> None:
    kinds = {p.meta.kind for p in real_pages}
    assert {"home", "index", "topic", "company", "question", "concept", "pricing"} <= kinds
    for page in real_pages:
        title, description = page.meta.title, page.meta.description
        assert 0 < len(title) <= SHORT_TITLE_MAX, (page.path, len(title), title)
        assert len(full_title(title)) <= SHORT_TITLE_MAX or full_title(title) == title, page.path
        assert DESCRIPTION_MIN <= len(description) <= DESCRIPTION_MAX, (page.path, len(description), description)
        assert not description.endswith(("…", "...")), page.path
    titles = [p.meta.title for p in real_pages]
    descriptions = [p.meta.description for p in real_pages]
    assert len(set(titles)) == len(titles)
    assert len(set(descriptions)) == len(descriptions)


def test_question_h1_is_the_long_title(real_corpus: Corpus, real_pages: list[Page]) -> None:
    by_path = {p.path: p for p in real_pages}
    for slug, q in real_corpus.questions.items():
        page = by_path[f"questions/{slug}.md"]
        assert f"\n# {q.title}\n" in page.markdown
        assert page.meta.title == q.short_title != q.title
        assert len(q.title) > SHORT_TITLE_MAX or q.title != q.short_title


def test_no_page_claims_reader_votes(real_pages: list[Page]) -> None:
    for page in real_pages:
        text = page.markdown.lower()
        assert " votes" not in text.replace("not reader votes", ""), page.path
        assert "most-voted" not in text, page.path
