"""Real Chromium over the built fixture site: one page of each type, light and dark, phone and desktop."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from qbank.sitecheck.links import serve

from ..capabilities import CHROMIUM, require
from ..conftest import REPO

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.xdist_group("site")]

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync"]
OUT = REPO / "test-artifacts" / "screenshots"
PAGES = {
    "home": "",
    "topic": "topics/kv-cache/",
    "company": "companies/xai/",
    "company-topic": "companies/xai/kv-cache/",
    "question-free-math": "questions/spec-speedup/",
    "question-premium": "questions/kv-fp8/",
    "concept": "concepts/kv-cache/",
    "pricing": "pricing/",
    "search": "search/",
    "404": "404.html",
}
VIEWPORTS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 900}}


def playwright_or_skip() -> Any:
    """The Playwright sync API and Chromium; under CI a missing browser fails instead of skipping."""
    require("playwright", "chromium")
    from playwright.sync_api import sync_playwright

    return sync_playwright


@contextmanager
def phone_page(site: Path) -> Iterator[tuple[str, Any, list[str]]]:
    """The built site served on 127.0.0.1 and one phone-sized Chromium page on it: (base URL, page, the URL of
    every request the page makes, in order)."""
    sync_playwright = playwright_or_skip()
    with serve(site) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport=VIEWPORTS["phone"])
            fetched: list[str] = []
            page.on("request", lambda r: fetched.append(r.url))
            yield base, page, fetched
        finally:
            browser.close()


def shoot(browser: Any, base: str, scheme: str, device: str) -> None:
    """Every page type in one colour scheme and viewport; no request may leave the site or fail."""
    context = browser.new_context(viewport=VIEWPORTS[device], color_scheme=scheme)
    page = context.new_page()
    foreign: list[str] = []
    failed: list[str] = []
    errors: list[str] = []
    page.on("request", lambda r: foreign.append(r.url) if not r.url.startswith(base) else None)
    page.on("requestfailed", lambda r: failed.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    for name, url in PAGES.items():
        page.goto(base + url, wait_until="networkidle")
        if name == "question-free-math":
            # typeset at build time: MathML is in the HTML, laid out by the browser with no script
            assert page.locator(".arithmatex math").count() >= 2
            page.locator("details.qb-try > summary").first.click()  # the "try it first" fold opens
            box = page.locator(".arithmatex math").first.bounding_box()
            assert box is not None and box["height"] > 0
        if name == "search":
            page.fill(".pagefind-ui__search-input", "paged allocation")
            page.wait_for_selector(".pagefind-ui__result-link", timeout=10_000)
            hits = page.locator(".pagefind-ui__result-link").all_inner_texts()
            assert "Question · How much memory does paged allocation waste per sequence?" in hits, hits
            assert "SECRET" not in page.locator("#qb-search").inner_text()
        if name.startswith("question") and device == "phone":
            # the whole question fits the first screen with room for its teaser (kv-fp8's title is 200 characters)
            h1, lead = page.locator("h1").bounding_box(), page.locator(".qb-lead").first.bounding_box()
            assert h1 is not None and lead is not None
            assert h1["height"] <= 0.25 * VIEWPORTS["phone"]["height"], (name, h1)
            assert lead["y"] + lead["height"] / 2 < VIEWPORTS["phone"]["height"], (name, lead)
        expected = "slate" if scheme == "dark" else "default"
        assert page.locator("body").get_attribute("data-md-color-scheme") == expected
        assert page.locator("h1").count() == 1, name
        page.screenshot(path=str(OUT / f"{name}-{scheme}-{device}.png"), full_page=True)
    context.close()
    assert foreign == [], f"requests left the site: {foreign[:3]}"
    assert failed == [] and errors == [], (failed, errors)


def test_pages_render_in_chromium(site: Path) -> None:
    sync_playwright = playwright_or_skip()
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*.png"):
        old.unlink()
    with serve(site) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            for scheme in ("light", "dark"):
                for device in VIEWPORTS:
                    shoot(browser, base, scheme, device)
        finally:
            browser.close()
    assert len(list(OUT.glob("*.png"))) == len(PAGES) * 4
