"""The site fixture corpus, loaded once (no mkdocs involved)."""

from __future__ import annotations

import pytest

from qbank.corpus import Corpus, load_corpus
from qbank.offer.model import Shop, load_shop
from qbank.render.pages import Page, render_pages
from qbank.render.settings import Settings

from ..conftest import CASES, REPO

SITE_CASE = CASES / "site"


@pytest.fixture(scope="session")
def corpus() -> Corpus:
    """tests/cases/site: two topics, one company, six questions (free and premium)."""
    corpus, report = load_corpus(SITE_CASE)
    assert not report.problems, [p.text() for p in report.problems]
    return corpus


@pytest.fixture(scope="session")
def shop() -> Shop:
    """This repository's offer (site_src/shop.yaml)."""
    shop, problems = load_shop(REPO)
    assert shop is not None, [p.text() for p in problems]
    return shop


@pytest.fixture(scope="session")
def pages(corpus: Corpus, shop: Shop) -> dict[str, Page]:
    """Every rendered page by path, default settings (no paywall)."""
    return {p.path: p for p in render_pages(corpus, Settings(shop=shop))}
