"""The page memo (``render.pages.PageMemo``, kept by `qbank serve`): every kept page equals a fresh render, the
pages other than question pages are kept through an answer's prose edit and rendered again when what they read
changes (a question's title, the catalog, the premium sections the pricing page counts)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from qbank.corpus import Corpus, load_corpus
from qbank.offer.model import Shop
from qbank.render.common import company_path, topic_path
from qbank.render.pages import Page, PageMemo, render_pages
from qbank.render.settings import Settings
from qbank.seal.regions import new_token

from ..conftest import CASE_IGNORE
from .conftest import SITE_CASE

TOKEN = new_token()  # one token for every render of a test, as a serve session has


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A copy of tests/cases/site to edit."""
    out = tmp_path / "repo"
    shutil.copytree(SITE_CASE, out, ignore=CASE_IGNORE)
    return out


def loaded(root: Path) -> Corpus:
    """The corpus as it is now (a new object per save, as the serve loop's check makes)."""
    return load_corpus(root)[0]


def as_data(pages: list[Page]) -> list[tuple[str, str, object]]:
    return [(p.path, p.markdown, p.meta) for p in pages]


def render(root: Path, shop: Shop, memo: PageMemo) -> dict[str, Page]:
    """A render through the memo, checked against a fresh one of the same corpus."""
    corpus, settings = loaded(root), Settings(shop=shop, seal_token=TOKEN)
    pages = render_pages(corpus, settings, {}, memo)
    assert as_data(pages) == as_data(render_pages(corpus, settings, {}))
    return {p.path: p for p in pages}


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_an_answer_prose_edit_keeps_every_listing_page(root: Path, shop: Shop) -> None:
    memo = PageMemo()
    first = render(root, shop, memo)
    assert memo.listings_rendered == len(first) - 6  # six question pages, the rest are listings
    edit(root / "answers" / "kv-fp8.md", "every cached key and value.", "every cached key and value. FRESH-7731.")
    second = render(root, shop, memo)
    assert memo.listings_rendered == 0 and memo.rendered == 1
    assert "FRESH-7731" in second["questions/kv-fp8.md"].markdown
    assert all(second[p] is first[p] for p in first if p != "questions/kv-fp8.md")


def test_a_title_edit_renders_the_topic_page_and_the_home_listing_again(root: Path, shop: Shop) -> None:
    memo = PageMemo()
    render(root, shop, memo)
    edit(root / "questions" / "kv-fp8.yaml", 'title: "Is an FP8', 'title: "RETITLED-5512 Is an FP8')
    pages = render(root, shop, memo)
    assert memo.listings_rendered > 0
    assert "RETITLED-5512" in pages[topic_path("kv-cache")].markdown


def test_a_catalog_edit_renders_the_company_page_again(root: Path, shop: Shop) -> None:
    memo = PageMemo()
    render(root, shop, memo)
    edit(root / "questions" / "_catalog" / "companies.yaml", "looks_for: Deep low-level",
         "looks_for: LOOKS-FOR-9043 Deep low-level")
    pages = render(root, shop, memo)
    assert "LOOKS-FOR-9043" in pages[company_path("xai")].markdown


def test_a_new_premium_section_renders_the_pricing_page_again(root: Path, shop: Shop) -> None:
    memo = PageMemo()
    before = render(root, shop, memo)["pricing.md"].markdown
    answer = root / "answers" / "kv-budget.md"
    answer.write_text(answer.read_text() + "\n/// premium\n## One more\n\nSECRET-PREMIUM-ONE-MORE.\n///\n")
    after = render(root, shop, memo)["pricing.md"].markdown
    assert memo.listings_rendered > 0 and after != before
