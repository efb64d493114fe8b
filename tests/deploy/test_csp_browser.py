"""The Content-Security-Policy in `_headers` lets the built site run: real Chromium over `qbank serve --built`.

The header policy (the pages' own, with every page's hashes, plus frame-ancestors) and each page's `<meta>`
policy are both enforced. It allows mkdocs-material's inline scripts by hash only; a page that breaks under it
shows up as a CSP violation in the console. The control serves the same site with the header's hashes removed
and must see them.
"""

from __future__ import annotations

import contextlib
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from ..capabilities import CHROMIUM, require
from .conftest import serving

pytestmark = pytest.mark.browser

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _browser_or_skip() -> Any:
    require("playwright", "chromium")
    from playwright.sync_api import sync_playwright

    return sync_playwright


def visit(base: str) -> tuple[list[str], list[str]]:
    """Open the home page, go to search through instant navigation and search; console errors and result titles."""
    sync_playwright = _browser_or_skip()
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(base, wait_until="networkidle")
            page.locator("footer .qb-footer__links a", has_text="Search").first.click()  # search lives in the header
            page.wait_for_url("**/search/")
            # Pagefind's UI (search.js, which qbank.js loads on the search page) fetches its WebAssembly and index
            # chunks once a query is typed; on a timeout the assertion on the titles says what was shown instead
            with contextlib.suppress(PlaywrightTimeout):
                page.locator(".pagefind-ui__search-input").press_sequentially("kv cache", delay=30, timeout=5000)
                page.wait_for_selector(".pagefind-ui__result-link", timeout=5000)
            titles = page.locator(".pagefind-ui__result-link").all_inner_texts()
        finally:
            browser.close()
    return errors, titles


def test_site_runs_under_its_csp_without_violations(built_repo: Path) -> None:
    with serving(built_repo / "site") as base:
        errors, titles = visit(base)
    found = "Question · How big is the KV cache of one request at long context?" in titles
    assert errors == [] and found, (errors, titles)


def test_control_a_policy_without_the_inline_hashes_is_violated(built_repo: Path, tmp_path: Path) -> None:
    site = shutil.copytree(built_repo / "site", tmp_path / "site")
    headers = site / "_headers"
    stripped = re.sub(r" 'sha256-[A-Za-z0-9+/=]+'", "", headers.read_text())
    assert "script-src 'self' 'wasm-unsafe-eval'; style-src" in stripped
    headers.write_text(stripped)
    with serving(site) as base:
        errors, _titles = visit(base)
    assert any("violates the following Content Security Policy directive 'script-src" in e for e in errors), errors
