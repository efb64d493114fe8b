"""The header's search box in real Chromium: a query typed on any page opens the Pagefind page with results,
each labelled with what it is (Question, Topic, Concept, Company)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_screenshots import phone_page

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.xdist_group("site")]


def test_header_search_finds_labelled_results(site: Path) -> None:
    with phone_page(site) as (base, page, fetched):
        from playwright.sync_api import expect  # after phone_page's check: a missing Playwright skips or fails

        page.goto(base + "questions/kv-fp8/", wait_until="networkidle")
        page.fill("#qb-header-q", "paged")
        page.keyboard.press("Enter")
        page.wait_for_url("**/search/?q=paged")
        page.wait_for_selector(".pagefind-ui__result-link", timeout=10_000)
        # each result's own title link (its sub-results, the page's headings, follow it)
        hits = page.locator("li.pagefind-ui__result").evaluate_all(
            "els => els.map(e => e.querySelector('.pagefind-ui__result-link').textContent.trim())"
        )
        labels = {h.split(" · ", 1)[0] for h in hits}
        assert "Question" in labels and "Concept" in labels, hits
        assert labels <= {"Question", "Topic", "Concept", "Company", "Page"}, hits
        assert page.locator(".pagefind-ui__search-input").input_value() == "paged"
        # the search runs on Pagefind's API: neither its packaged UI nor the filter index it loads at start
        # (a quarter of a first query's bytes at 5,000 questions, bench/search.py)
        pagefind = [u.rsplit("/", 1)[-1] for u in fetched if "/pagefind/" in u]
        assert "pagefind.js" in pagefind and any(u.endswith(".pf_index") for u in pagefind), pagefind
        assert not [u for u in pagefind if u.startswith("pagefind-ui") or u.endswith(".pf_filter")], pagefind
        # the next query, typed into the page's own field, replaces the results
        page.fill(".pagefind-ui__search-input", "fp8")
        expect(page.locator(".pagefind-ui__message")).to_contain_text("for fp8")
        assert "q=fp8" in page.url


def test_search_page_loads_pagefind_on_first_use(site: Path) -> None:
    with phone_page(site) as (base, page, fetched):
        from playwright.sync_api import expect  # after phone_page's check: a missing Playwright skips or fails

        page.goto(base + "search/", wait_until="networkidle")
        assert not [u for u in fetched if "/pagefind/" in u], fetched  # nothing until the reader searches
        assert any(u.endswith("/assets/search.js") for u in fetched), fetched  # the UI, from qbank.js
        # wiring the search field moves nothing: the field is in the page's HTML, not built under the text
        shift = page.evaluate("""() => new Promise(done => {
            let total = 0;
            new PerformanceObserver(list => {
                for (const e of list.getEntries()) if (!e.hadRecentInput) total += e.value;
            }).observe({type: "layout-shift", buffered: true});
            setTimeout(() => done(total), 500);
        })""")
        assert shift == 0, shift
        # a hidden button stays hidden though the theme styles buttons: nothing to load more of before a query
        expect(page.locator(".pagefind-ui__button")).to_be_hidden()
        page.fill(".pagefind-ui__search-input", "paged")  # the first query loads it and is answered
        expect(page.locator(".pagefind-ui__message")).to_contain_text("for paged")
        # the message can show before the results are drawn: wait for the first result, then count
        page.wait_for_selector(".pagefind-ui__result-link", timeout=10_000)
        assert page.locator(".pagefind-ui__result-link").count() > 0
        assert any(u.endswith("/pagefind/pagefind.js") for u in fetched), fetched
        # the search page is indexable for search engines but is not a result of its own search: every result
        # for words of its help text, read through Pagefind's API, is another page
        text = page.locator("article").inner_text()
        assert "premium sections" in text and "find-in-page" in text
        urls = page.evaluate("""async () => {
            const pf = await import(new URL("../pagefind/pagefind.js", location.href).href);
            const found = await pf.search("premium");
            return Promise.all(found.results.map(r => r.data().then(d => d.url)));
        }""")
        assert urls and not [u for u in urls if u.rstrip("/").endswith("/search")], urls
