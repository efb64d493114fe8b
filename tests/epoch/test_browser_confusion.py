"""Attack in the browser: ciphertext of another page, or of another section, served for a page under the
epoch (a compromised cache or bucket can serve any bytes): paywall.js must refuse it ("tampered"), show
nothing decrypted, and never fall back to another key. The real build, keyslot step and Chromium."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import Route, expect

from ..paywall.conftest import Built, built  # noqa: F401  (fixture)
from ..paywall.test_browser import DRAFT, KV, KV_SECTIONS, Tab, browser, tab  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("paywall-site")]


def premium_file(built: Built, page: str) -> str:  # noqa: F811
    """The ciphertext file a built page points at."""
    html = (built.site / page.strip("/") / "index.html").read_text("utf-8")
    m = re.search(r'data-qb-file="([0-9a-f]{20}\.json)"', html)
    assert m is not None
    return m.group(1)


@pytest.mark.parametrize("attack", ["another-page", "another-section"])
def test_ciphertext_of_another_page_or_section_fails_closed(tab: Tab, built: Built, attack: str) -> None:  # noqa: F811
    other = json.loads((built.site / "assets/premium" / premium_file(built, DRAFT)).read_bytes())
    mine = premium_file(built, KV)

    def serve(route: Route) -> None:
        response = route.fetch()
        body = json.loads(response.text())
        if attack == "another-page":  # the draft page's whole file (same epoch), its own section numbers
            body = other
        else:  # every section carries the first one's ciphertext, digest and nonce (that one is genuine)
            first = body["sections"][sorted(body["sections"])[0]]
            body["sections"] = {s: first for s in body["sections"]}
        route.fulfill(response=response, body=json.dumps(body))

    assert other["release"] == json.loads((built.site / "assets/premium" / mine).read_bytes())["release"]
    tab.page.route(f"**/assets/premium/{mine}", serve)
    if attack == "another-page":  # and the KV page's spots renumbered to the draft's sections
        numbers = iter(sorted(other["sections"]) * KV_SECTIONS)

        def renumber(route: Route) -> None:
            response = route.fetch()
            html = re.sub(r'data-qb-section="[^"]*"', lambda _m: f'data-qb-section="{next(numbers)}"', response.text())
            route.fulfill(response=response, body=html)

        tab.page.route(f"**{KV}", renumber)
    tab.goto(KV)
    tab.unlock_with(built.keys.valid)
    status = tab.page.locator(".qb-locked__status").first
    expect(status).to_have_attribute("data-reason", "tampered")
    expect(tab.page.locator(".qb-locked")).to_have_count(KV_SECTIONS)
    expect(tab.page.locator(".qb-unlocked")).to_have_count(0)
    assert "QBCANARY" not in tab.page.content()
