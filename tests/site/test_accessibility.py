"""Accessibility in real Chromium: axe-core (npm, pinned, injected by Playwright) finds no violation on any page
type in light and dark mode, nor with the unlock dialog open; no page loads a math script."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from qbank.sitecheck.links import serve

from ..capabilities import AXE, require
from ..conftest import REPO
from .test_screenshots import ARGS, CHROMIUM, PAGES, playwright_or_skip

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.xdist_group("site")]

MATH_SCRIPT = re.compile(r"katex|mathjax|mathml|auto-render", re.I)


def axe_source() -> str:
    """axe-core as `make node` installs it; under CI a missing file fails instead of skipping."""
    require("axe")
    return AXE.read_text(encoding="utf-8")


def violations(page: Any, axe: str) -> list[str]:
    """axe-core's violations on the page as it is now, one line each (rule, impact, first target)."""
    page.evaluate(axe)  # CSP allows no injected <script> element: evaluate the source in the page instead
    found = page.evaluate("async () => (await axe.run(document)).violations.map(v => "
                          "[v.id, v.impact, v.nodes.length, v.nodes[0].target.join(' '), v.nodes[0].failureSummary])")
    return [" | ".join(str(x) for x in v) for v in found]


def test_axe_finds_no_violations_light_dark_and_dialog(site: Path) -> None:
    sync_playwright = playwright_or_skip()
    axe = axe_source()
    report: dict[str, list[str]] = {}
    scripts: list[str] = []
    with serve(site) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            for scheme in ("light", "dark"):
                context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
                page = context.new_page()
                page.on("request", lambda r: scripts.append(r.url) if r.resource_type == "script" else None)
                for name, url in PAGES.items():
                    page.goto(base + url, wait_until="networkidle")
                    report[f"{name}/{scheme}"] = violations(page, axe)
                page.goto(base + PAGES["question-premium"], wait_until="networkidle")
                page.locator(".qb-unlock-open").first.click()
                page.wait_for_selector("dialog.qb-dialog[open]")
                report[f"unlock-dialog/{scheme}"] = violations(page, axe)
                context.close()
        finally:
            browser.close()
    assert {k: v for k, v in report.items() if v} == {}
    assert len(report) == 2 * (len(PAGES) + 1)
    assert scripts and not [s for s in scripts if MATH_SCRIPT.search(s)]
