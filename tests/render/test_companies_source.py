"""The company page shows where its interview process comes from, escaped as text."""

from __future__ import annotations

import datetime as dt

from qbank.corpus import load_corpus
from qbank.render.companies import company_page
from qbank.render.settings import settings_from

from ..conftest import CASES


def test_source_and_checked_date_are_shown_as_text() -> None:
    corpus, _ = load_corpus(CASES / "site")
    slug = next(iter(corpus.companies))
    company = corpus.companies[slug]
    corpus.companies[slug] = company.model_copy(update={"source": "Posts <b>A & B</b>", "checked": dt.date(2026, 1, 2)})
    page = company_page(corpus, slug, settings_from("https://qbank.example/", {}))
    assert "Source: Posts &lt;b&gt;A &amp; B&lt;/b&gt; (checked 2026-01-02)." in page.markdown
