"""The Content-Security-Policy in `_headers` lets the built site run: real Chromium over `qbank serve --built`.

The policy allows mkdocs-material's inline scripts by hash only; a page that breaks under it shows up as a
CSP violation in the console. The control serves the same site with the hashes removed and must see them.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from .conftest import serving

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _browser_or_skip() -> Any:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    if sync_playwright is None or not Path(CHROMIUM).is_file():
        if os.environ.get("CI") == "true":
            pytest.fail("browser tests need playwright and Debian's chromium (make browser)")
        pytest.skip("playwright or /usr/bin/chromium missing (run make browser)")
    return sync_playwright


def visit(base: str) -> tuple[list[str], str]:
    """Open the home page, then search from it; returns console errors and the search result summary."""
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
            page.keyboard.press("s")  # mkdocs-material's search shortcut, handled by its (hashed) bundle
            page.locator("input.md-search__input").press_sequentially("inference", delay=30)
            # results appear once the search worker has loaded the index; on a timeout the assertion on the
            # summary says what was shown instead
            with contextlib.suppress(PlaywrightTimeout):
                page.wait_for_function(
                    "() => /matching/.test(document.querySelector('.md-search-result__meta')?.textContent ?? '')",
                    timeout=5000,
                )
            summary = page.locator(".md-search-result__meta").inner_text()
        finally:
            browser.close()
    return errors, summary


def test_site_runs_under_its_csp_without_violations(built_repo: Path) -> None:
    with serving(built_repo / "site") as base:
        errors, summary = visit(base)
    assert errors == [] and "matching document" in summary


def test_control_a_policy_without_the_inline_hashes_is_violated(built_repo: Path, tmp_path: Path) -> None:
    site = shutil.copytree(built_repo / "site", tmp_path / "site")
    headers = site / "_headers"
    stripped = re.sub(r" 'sha256-[A-Za-z0-9+/=]+'", "", headers.read_text())
    assert "script-src 'self'; style-src" in stripped
    headers.write_text(stripped)
    with serving(site) as base:
        errors, _summary = visit(base)
    assert any("violates the following Content Security Policy directive 'script-src" in e for e in errors), errors
