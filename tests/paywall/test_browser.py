"""The paywall in a real browser: Playwright drives Debian's Chromium against the built site on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from qbank.paywall.ledger import open_ledger

from ..capabilities import CHROMIUM, require
from ..conftest import REPO
from .conftest import Built, built_and_served, rebuild

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("paywall-site")]

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = REPO / "test-artifacts" / "paywall"
KV = "/questions/kv-cache-long-context/"
DRAFT = "/questions/draft-acceptance-rate/"
TOPIC = "/topics/kv-cache/"
# sealed sections per page: the answer's premium ones, then the executed derivation of a premium question
KV_SECTIONS, DRAFT_SECTIONS = 3, 2

require("playwright")  # a failure under CI=true, a skip elsewhere
from playwright.sync_api import Browser, BrowserContext, Page, Route, expect, sync_playwright  # noqa: E402


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One Chromium for the whole module."""
    require("chromium")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


class Tab:
    """A fresh browser context (empty IndexedDB) with its requests and CSP reports recorded."""

    def __init__(self, context: BrowserContext, base: str) -> None:
        self.context, self.base = context, base
        self.page: Page = context.new_page()
        self.requests: list[str] = []
        self.csp: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("console", lambda m: self.csp.append(m.text) if "Content Security Policy" in m.text else None)

    def goto(self, path: str) -> None:
        self.page.goto(self.base + path)
        self.page.wait_for_load_state("networkidle")

    def unlock_with(self, key: str) -> None:
        self.page.locator(".qb-unlock-open").first.click()
        self.page.fill("#qb-key", key)
        self.page.locator(".qb-dialog__submit").click()

    def shot(self, name: str) -> None:
        self.page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


@pytest.fixture
def tab(browser: Browser, built: Built) -> Iterator[Tab]:
    """A fresh context and page; fails the test on any Content-Security-Policy violation."""
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    t = Tab(context, built.url)
    yield t
    context.close()
    assert t.csp == [], t.csp


def test_placeholder_shown_and_nothing_premium_fetched(tab: Tab) -> None:
    tab.goto(KV)
    locked = tab.page.locator(".qb-premium.qb-locked")
    expect(locked).to_have_count(KV_SECTIONS)
    expect(locked.locator("h2")).to_have_text(["The full derivation", "Where the memory actually goes",
                                               "Executed derivation"])
    expect(tab.page.locator(".qb-unlock-open").first).to_be_visible()
    assert "QBCANARY" not in tab.page.content()
    # the inner heading of a premium section is not in the table of contents
    assert tab.page.locator("nav.md-nav--secondary a", has_text="A check on the units").count() == 0
    assert not [u for u in tab.requests if "/assets/premium/" in u or "/assets/keyslots/" in u]
    tab.shot("01-locked")


def test_unlock_navigate_reload_forget(tab: Tab, built: Built) -> None:
    page = tab.page
    tab.goto(DRAFT)
    tab.unlock_with(built.keys.valid)
    # unlocked sections keep the .qb-premium class that the page's JSON-LD `hasPart` selector names
    expect(page.locator(".qb-premium.qb-unlocked")).to_have_count(DRAFT_SECTIONS)
    expect(page.locator(".qb-locked")).to_have_count(0)
    section = page.locator(".qb-unlocked").first
    expect(section).to_contain_text("QBCANARYGAMMA55D0")
    expect(page.locator(".qb-unlocked").last.locator("h2")).to_contain_text("Executed derivation")
    # highlighting: Pygments spans are in the decrypted HTML and styled by the theme
    keyword = section.locator(".highlight code span.k").first
    expect(keyword).to_have_text("def")
    assert keyword.evaluate("el => getComputedStyle(el).color") != section.locator(
        ".highlight code"
    ).evaluate("el => getComputedStyle(el).color")
    copy = section.locator("pre > .md-code__nav > button.md-code__button[data-md-type=copy]")
    expect(copy).to_have_count(1)
    blocks = page.locator(".qb-unlocked pre").count()  # the derivation's code has its button too
    assert page.locator(".qb-unlocked pre > .md-code__nav > button").count() == blocks >= DRAFT_SECTIONS
    # the theme's stylesheet places it inside the code block, and its clipboard handler copies the code
    box, pre = copy.bounding_box(), section.locator("pre").first.bounding_box()
    assert box and pre and pre["y"] <= box["y"] and box["y"] + box["height"] <= pre["y"] + pre["height"]
    tab.context.grant_permissions(["clipboard-read", "clipboard-write"])
    copy.click()
    assert page.evaluate("navigator.clipboard.readText()").startswith("def expected_tokens(alpha, gamma):")
    tab.shot("02-unlocked")

    # instant navigation (no page load: a marker on window survives) to another premium page
    page.evaluate("window.__qbMarker = 42")
    page.locator("article .qb-list a", has_text="How big is the KV cache").click()  # a related question
    page.wait_for_url(f"**{KV}")
    expect(page.locator(".qb-unlocked")).to_have_count(KV_SECTIONS)
    assert page.evaluate("window.__qbMarker") == 42, "navigation reloaded the page: instant navigation is off"
    expect(page.locator(".qb-unlocked").first).to_contain_text("QBCANARYALPHA7F3A")
    expect(page.locator(".qb-unlocked .arithmatex").first).to_be_visible()

    # the topic hub's count (one of its two questions is free), through instant navigation too
    page.locator("article .qb-tags a", has_text="KV Cache & Memory").click()
    page.wait_for_url(f"**{TOPIC}")
    assert page.evaluate("window.__qbMarker") == 42
    expect(page.locator("[data-qb-unlock-count]")).to_have_text("2")

    page.goto(tab.base + KV)
    expect(page.locator(".qb-unlocked")).to_have_count(KV_SECTIONS)
    tab.shot("03-reloaded")

    page.locator(".qb-forget").first.click()
    page.wait_for_load_state("load")
    expect(page.locator(".qb-locked")).to_have_count(KV_SECTIONS)
    expect(page.locator(".qb-unlocked")).to_have_count(0)
    page.goto(tab.base + TOPIC)
    expect(page.locator("[data-qb-unlock-count]")).to_have_text("1")


def test_license_link_in_fragment(tab: Tab, built: Built) -> None:
    tab.goto(f"{KV}#license={built.keys.unsold}")
    expect(tab.page.locator(".qb-unlocked")).to_have_count(KV_SECTIONS)
    assert "#license" not in tab.page.url
    assert not [u for u in tab.requests if "license=" in u], "the key reached a server"


@pytest.mark.parametrize(
    ("which", "reason", "text"),
    [
        ("typo", "checksum", "typo"),
        ("stranger", "unknown", "not valid"),
        ("expired", "expired", "expired on 2020-07-15"),
        ("revoked", "revoked", "revoked"),
    ],
)
def test_refused_keys_say_why(tab: Tab, built: Built, which: str, reason: str, text: str) -> None:
    key = (
        built.keys.valid[:-1] + ("X" if built.keys.valid[-1] != "X" else "Y")
        if which == "typo"
        else getattr(built.keys, which)
    )
    tab.goto(KV)
    tab.unlock_with(key)
    error = tab.page.locator(".qb-dialog__error")
    expect(error).to_have_attribute("data-reason", reason)
    expect(error).to_contain_text(text)
    expect(tab.page.locator(".qb-locked")).to_have_count(KV_SECTIONS)
    assert "QBCANARY" not in tab.page.content()
    if which == "typo":
        assert not [u for u in tab.requests if "/assets/keyslots/" in u], "a typo must be caught before any request"
    tab.shot(f"04-refused-{which}")


def test_tampered_ciphertext_fails_closed(tab: Tab, built: Built) -> None:
    def flip(route: Route) -> None:
        response = route.fetch()
        body = json.loads(response.text())
        for sec in body["sections"].values():
            c = sec["c"]
            sec["c"] = c[:10] + ("A" if c[10] != "A" else "B") + c[11:]
        route.fulfill(response=response, body=json.dumps(body))

    tab.page.route("**/assets/premium/*.json", flip)
    tab.goto(KV)
    tab.unlock_with(built.keys.valid)
    status = tab.page.locator(".qb-locked__status").first
    expect(status).to_have_attribute("data-reason", "tampered")
    expect(status).to_contain_text("integrity check")
    expect(tab.page.locator(".qb-locked")).to_have_count(KV_SECTIONS)
    expect(tab.page.locator(".qb-unlocked")).to_have_count(0)
    tab.shot("05-tampered")


def test_csp_blocks_an_injected_inline_script(tab: Tab) -> None:
    tab.goto(KV)
    tab.page.evaluate(
        """() => { const s = document.createElement("script");
                   s.textContent = "window.__pwned = 1"; document.head.append(s); }"""
    )
    assert tab.page.evaluate("window.__pwned") is None
    assert any("script-src" in line for line in tab.csp)
    tab.csp.clear()  # this violation was the point of the test


def test_revoked_in_the_next_release_locks_a_remembered_device(browser: Browser, tmp_path: Path) -> None:
    with built_and_served(tmp_path) as site:
        context = browser.new_context()
        tab = Tab(context, site.url)
        tab.goto(KV)
        tab.unlock_with(site.keys.valid)
        expect(tab.page.locator(".qb-unlocked")).to_have_count(KV_SECTIONS)
        with open_ledger(site.ledger) as book:
            book.revoke(site.keys.valid, "chargeback")
        rebuild(site.root, site.ledger, site.identity)  # a new release key; the revoked license opens nothing
        tab.page.reload()
        status = tab.page.locator(".qb-locked__status").first
        expect(status).to_have_attribute("data-reason", "revoked")
        expect(tab.page.locator(".qb-unlocked")).to_have_count(0)
        assert "QBCANARY" not in tab.page.content()
        tab.shot("06-revoked-after-release")
        context.close()
        assert tab.csp == []


def test_keyboard_only_walk_through_unlock(tab: Tab, built: Built) -> None:
    """Tab to the page's one unlock button, open the dialog with Enter, reach "Get a key", type the key, submit."""
    page = tab.page
    tab.goto(KV)
    for _ in range(120):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('qb-unlock-open')"):
            break
    else:
        pytest.fail("Tab never reached the unlock button")
    assert page.locator(".qb-unlock-open:visible").count() == 1  # one call to action per page
    page.keyboard.press("Enter")
    expect(page.locator("dialog.qb-dialog[open]")).to_have_count(1)
    assert page.evaluate("document.activeElement.id") == "qb-key"
    placeholder = page.locator("#qb-key").get_attribute("placeholder") or ""
    assert placeholder.startswith("QB-") and len(placeholder.replace("-", "")) == 2 + 32
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Get a key"
    href = page.evaluate("document.activeElement.href")
    assert href == built.url + "/pricing/" or href.endswith("/pricing/")
    page.keyboard.press("Shift+Tab")
    page.keyboard.type(built.keys.valid)
    page.keyboard.press("Enter")
    expect(page.locator(".qb-premium.qb-unlocked")).to_have_count(KV_SECTIONS)
    expect(page.locator("dialog.qb-dialog[open]")).to_have_count(0)


def test_get_a_key_leads_to_the_price_and_the_checkout(tab: Tab, built: Built) -> None:
    page = tab.page
    tab.goto(KV)
    page.locator(".qb-unlock-open").first.click()
    page.locator(".qb-dialog__get").click()
    page.wait_for_url("**/pricing/")
    buy = page.locator("a.qb-buy")
    expect(buy).to_have_count(1)
    assert (buy.get_attribute("href") or "").startswith("https://")
    expect(buy).to_contain_text("Buy Premium · ")
