"""In real Chromium, an answer's <meta http-equiv="refresh"> and <style> have no effect on the built page."""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

import pytest

from ..capabilities import CHROMIUM, require
from .test_attack_cases import overlay, run_stage

require("playwright")  # a failure under CI=true, a skip elsewhere
from playwright.sync_api import Route, sync_playwright  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.slow]
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.mark.parametrize("case", ["seal-meta-refresh", "seal-style-injection"])
def test_injected_markup_does_nothing_in_chromium(tmp_path: Path, case: str) -> None:
    require("chromium")
    root = overlay(tmp_path, case)
    run = run_stage(root, "build")
    assert run.returncode == 0, run.stdout[-2000:]
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root / "site")))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/questions/kv-budget/"
    outside: list[str] = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
            page = browser.new_page()

            def block(route: Route) -> None:
                outside.append(route.request.url)
                route.abort()

            page.route("https://phish.example/**", block)
            page.goto(url)
            page.wait_for_timeout(2500)  # a 0-second refresh would have fired by now
            assert page.url == url
            assert page.locator(".md-content").is_visible()  # no injected style hid the content
            assert page.locator("article style, article meta, article form, article iframe").count() == 0
            browser.close()
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert outside == []  # nothing was fetched from the phishing origin
