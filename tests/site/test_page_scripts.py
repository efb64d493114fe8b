"""Which of the site's own scripts a page fetches, in real Chromium: qbank.js on every page, the paywall only
where a page has something to unlock or count, the practice scripts only on practice pages; and a page
reached by instant navigation from one without the paywall still gets its unlock button; the paywall is
fetched after the page's load event and its button works as soon as it shows; a free question's derivation
opens from its fold."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_screenshots import phone_page

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.xdist_group("site")]

PRACTICE = {"store.js", "practice.js", "drill.js"}


def own_scripts(urls: list[str]) -> set[str]:
    """The file names of the site's own scripts among fetched URLs (not the theme's bundle)."""
    return {u.rsplit("/", 1)[-1] for u in urls if "/assets/" in u and u.endswith(".js") and "/javascripts/" not in u}


def test_scripts_load_only_where_used_and_after_instant_navigation(site: Path) -> None:
    with phone_page(site) as (base, page, fetched):
        from playwright.sync_api import expect  # after phone_page's check: a missing Playwright skips or fails


        page.goto(base + "about/", wait_until="networkidle")
        assert own_scripts(fetched) == {"qbank.js"}, fetched  # nothing to unlock, no drill, no search UI

        fetched.clear()
        page.goto(base + "questions/kv-fp8/", wait_until="networkidle")
        assert own_scripts(fetched) == {"qbank.js", "paywall.js"}, fetched
        assert not own_scripts(fetched) & PRACTICE
        unlock = page.locator(".qb-unlock-open")
        expect(unlock).to_be_visible()  # the paywall shows the button it binds
        # fetched once the page has loaded (at idle time), out of the work that blocks the page while it loads
        load_start, paywall_start = page.evaluate("""() => [
            performance.getEntriesByType("navigation")[0].loadEventStart,
            performance.getEntriesByType("resource").find(e => e.name.endsWith("/paywall.js")).startTime]""")
        assert paywall_start >= load_start > 0
        unlock.click()  # and the button works at once
        expect(page.locator("dialog.qb-dialog")).to_be_visible()

        # instant navigation (the theme swaps the content, the page's scripts are not run again): from a
        # page without the paywall to a sealed one, the loader fetches it and the button works
        fetched.clear()
        page.goto(base + "about/", wait_until="networkidle")
        assert "paywall.js" not in own_scripts(fetched)
        # the theme's own route for a followed link: location$ (a click goes there after its sitemap check and
        # pushes the address itself, which this call does not)
        page.evaluate("url => { window.qbSamePage = true; window.location$.next(new URL(url)); }",
                      base + "questions/kv-fp8/")  # fmt: skip
        expect(page.locator(".qb-unlock-open")).to_be_visible()
        assert page.evaluate("() => window.qbSamePage") is True  # instant navigation, not a page load
        for _ in range(100):  # the request event can reach this process after the button shows
            if "paywall.js" in own_scripts(fetched):
                break
            page.wait_for_timeout(50)
        assert "paywall.js" in own_scripts(fetched), fetched
        page.locator(".qb-unlock-open").click()
        expect(page.locator("dialog.qb-dialog")).to_be_visible()
        expect(page.locator("#qb-key")).to_be_focused()


def test_free_derivation_opens_from_its_fold(site: Path) -> None:
    with phone_page(site) as (base, page, _):
        from playwright.sync_api import expect

        page.goto(base + "questions/kv-per-request/")
        fold = page.locator("details.qb-derivation")
        code = fold.locator(".highlight code").first
        expect(page.locator("p.qb-legend")).to_be_visible()
        expect(code).to_be_hidden()
        # closed, the fold's content takes no box: the theme measuring inside it costs no restyle of the fold
        display = "el => getComputedStyle(el).display"
        assert fold.locator(".highlight").first.evaluate(display) == "none"
        assert page.locator("details.qb-try > :not(summary)").first.evaluate(display) == "none"
        fold.locator("summary").click()
        expect(code).to_be_visible()
        assert fold.locator(".highlight").first.evaluate(display) != "none"
        # the theme mounts its copy button on the folded code as on any other
        expect(fold.locator(".md-code__button").first).to_be_visible()


def test_an_unwired_unlock_button_is_unseen_but_keeps_its_room(site: Path) -> None:
    with phone_page(site) as (base, page, _):
        from playwright.sync_api import expect  # after phone_page's check: a missing Playwright skips or fails

        page.route("**/paywall.js", lambda route: route.abort())  # paywall.js never arrives: nothing wires it
        page.goto(base + "questions/kv-fp8/", wait_until="networkidle")
        unlock = page.locator(".qb-unlock-open").first
        expect(unlock).to_be_hidden()  # not seen, not clickable, out of the tab order before it works
        box = unlock.bounding_box()
        assert box is not None and box["width"] > 0 and box["height"] > 0  # its room is kept: wiring moves nothing
        get_key = page.locator(".qb-locked__actions a.md-button").first
        expect(get_key).to_be_visible()  # the way to buy shows regardless
