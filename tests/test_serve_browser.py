"""`qbank serve` in a real browser: an open page reloads by itself after a save (mkdocs' live-reload script)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .capabilities import CHROMIUM, require
from .test_serve import PAGE, SLUG, Preview, banner, preview  # noqa: F401  (preview is a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync"]

require("playwright")  # a failure under CI=true, a skip elsewhere
from playwright.sync_api import Browser, expect, sync_playwright  # noqa: E402


@pytest.fixture
def browser() -> Iterator[Browser]:
    """Debian's Chromium, headless."""
    require("chromium")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


def test_an_open_page_reloads_after_a_save_and_shows_the_banner(preview: Preview, browser: Browser) -> None:  # noqa: F811
    page = browser.new_page()
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text))
    page.goto(preview.url + PAGE)
    expect(page.locator(".qb-preview-mark").first).to_be_visible()
    expect(page.get_by_text("SECRET-PREMIUM-BLOCK-WASTE", exact=False)).to_be_visible()
    page.wait_for_function("() => document.readyState === 'complete'")

    answer = preview.root / "answers" / f"{SLUG}.md"
    original = answer.read_text()
    edited = original.replace("for less waste.", "for less waste. BROWSER-EDIT-5521.")
    answer.write_text(edited.replace("\n///\n", "\n"))  # and the premium block no longer closes
    # no navigation here: the live-reload script reloads the tab once the rebuild is visible
    expect(page.locator(".qb-preview-banner")).to_contain_text("premium-unclosed", timeout=40_000)
    expect(page.locator(".qb-preview-banner")).to_contain_text(f"answers/{SLUG}.md:3:1")

    answer.write_text(edited)
    expect(page.get_by_text("BROWSER-EDIT-5521", exact=False)).to_be_visible(timeout=40_000)
    expect(page.locator(".qb-preview-error")).to_have_count(0)
    assert "Enabled live reload" in console
    assert not [m for m in console if "Content Security Policy" in m]
