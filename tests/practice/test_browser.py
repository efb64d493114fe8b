"""Practice in real Chromium, against the practice corpus built by `qbank build` and served with the
production CSP (`qbank serve --built`'s server): take a test, unlock a premium one, run a drill."""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..capabilities import CHROMIUM, require
from ..conftest import REPO
from .conftest import PRACTICE_CASE, Served

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync"]
SHOTS = REPO / "test-artifacts" / "practice"
FREE = "/practice/kv-free-sample/"
PREMIUM = "/practice/kv-loop-premium/"
DRILL = "/practice/drills/token-bucket-admission/"
CANARY = "QBPRACTICEPREMIUMCANARY"

require("playwright")  # a failure under CI=true, a skip elsewhere
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright  # noqa: E402


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's Chromium, headless (a missing one fails under CI)."""
    require("chromium")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


class Watch:
    """Every request a context makes, and any console error or CSP report."""

    def __init__(self, context: BrowserContext) -> None:
        self.urls: list[str] = []
        self.errors: list[str] = []
        context.on("request", lambda r: self.urls.append(r.url))
        context.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)

    def foreign(self, origin: str) -> list[str]:
        return [u for u in self.urls if not u.startswith(origin + "/") and not u.startswith(("blob:", "data:"))]


def _unlock(page: Page, key: str) -> None:
    page.locator(".qb-unlock-open").first.click()
    page.fill("#qb-key", key)
    page.locator(".qb-dialog__submit").click()
    expect(page.locator(".qb-unlocked").first).to_be_visible()


def _answer_free_test(page: Page) -> None:
    """Six right, two wrong: 128 KiB, 8192 tokens, 1.5 GiB (wrong: 1.0), 4x, a distractor (wrong), then right."""
    page.fill("input[name=qbp-0]", "128")
    page.fill("input[name=qbp-1]", "8,192")
    page.fill("input[name=qbp-2]", "1.5")
    page.fill("input[name=qbp-3]", "4")
    page.check("input[name=qbp-4][value='1']")
    page.check("input[name=qbp-5][value='0']")
    for pos, text in enumerate(["MQA (1 KV head)", "GQA (8 KV heads)", "MHA (32 KV heads)"]):
        page.select_option(f"select[name=qbp-6-{pos}]", label=text)
    page.check("input[name=qbp-7][value='0']")


def test_take_a_free_test_score_review_progress_export_and_delete(served_practice: Served, browser: Browser) -> None:
    context = browser.new_context(accept_downloads=True)
    watch = Watch(context)
    page = context.new_page()
    page.goto(served_practice.url + FREE)
    expect(page.locator(".qbp-best")).to_have_text("No attempts on this device yet.")
    page.click(".qbp-start")
    expect(page.locator(".qbp-timer")).to_contain_text("Time left: 10:00")
    expect(page.locator(".qbp-unit").first).to_have_text("KiB")
    expect(page.locator(".qbp-hint").nth(2)).to_have_text("To the nearest 0.1 GiB.")
    _answer_free_test(page)
    page.click(".qbp-submit")
    expect(page.locator(".qbp-score")).to_have_text("Score: 6 / 8")
    review = page.locator(".qbp-review > li")
    assert [review.nth(i).get_attribute("data-qbp-ok") for i in range(8)] == ["1", "1", "0", "1", "0", "1", "1", "1"]
    expect(review.nth(2)).to_contain_text("Answer: 1.0 GiB")
    expect(review.nth(4)).to_contain_text("Why not: Scores are recomputed each step")
    expect(review.nth(4).get_by_role("link", name="Read the worked answer")).to_have_attribute(
        "href", "../../questions/what-is-a-kv-cache/")
    expect(page.locator(".qbp-best")).to_have_text("Best: 6 / 8 · 1 attempt on this device.")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "test-review-desktop.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=str(SHOTS / "test-review-phone.png"), full_page=True)

    page.reload()
    expect(page.locator(".qbp-best")).to_have_text("Best: 6 / 8 · 1 attempt on this device.")
    page.goto(served_practice.url + "/practice/")
    expect(page.locator(".qbp-progress__summary")).to_contain_text("KV Cache & Memory: 1 of 1 test taken, best 75%")
    with page.expect_download() as download:
        page.click(".qbp-export")
    exported = json.loads(Path(download.value.path()).read_text())
    assert [(a["test"], a["score"], a["total"]) for a in exported["attempts"]] == [("kv-free-sample", 6, 8)]
    page.click(".qbp-delete")
    page.click(".qbp-delete")
    expect(page.locator(".qbp-progress__summary")).to_have_text("No attempts on this device yet.")
    page.goto(served_practice.url + FREE)
    expect(page.locator(".qbp-best")).to_have_text("No attempts on this device yet.")
    assert watch.foreign(served_practice.url) == []
    assert watch.errors == []
    context.close()


def test_a_premium_test_is_sealed_until_a_license_opens_it(served_practice: Served, browser: Browser) -> None:
    for path in served_practice.site.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            text = gzip.decompress(data) if path.suffix == ".gz" else data
            assert CANARY.encode() not in text, path
    context = browser.new_context()
    watch = Watch(context)
    page = context.new_page()
    page.goto(served_practice.url + PREMIUM)
    expect(page.locator(".qbp-start")).to_be_disabled()
    assert CANARY not in page.content()
    _unlock(page, served_practice.keys.valid)
    expect(page.locator(".qbp-start")).to_be_enabled()
    page.click(".qbp-start")
    expect(page.locator(".qbp-item legend").first).to_contain_text(CANARY)
    page.fill("input[name=qbp-0]", "320")
    page.fill("input[name=qbp-1]", "40")
    page.click(".qbp-submit")
    expect(page.locator(".qbp-score")).to_have_text("Score: 2 / 8")
    assert watch.foreign(served_practice.url) == []
    assert watch.errors == []
    context.close()


def _saved(page: Page, drill: str) -> dict[str, object]:
    """The drill's record in the reader's IndexedDB, as the page's own store reads it."""
    record = page.evaluate("async (d) => (await window.qbPractice.drill(d)) || {}", drill)
    assert isinstance(record, dict)
    return record


def _wait_for_saved(page: Page, drill: str, field: str, holds: str, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while holds not in str(_saved(page, drill).get(field, "")):
        assert time.monotonic() < deadline, f"{drill}'s saved {field} never held {holds!r}"
        page.wait_for_timeout(50)


def test_a_drill_runs_public_then_edge_tests_on_pyodide_fetched_only_on_run(
    served_practice: Served, browser: Browser
) -> None:
    context = browser.new_context()
    watch = Watch(context)
    page = context.new_page()
    page.goto(served_practice.url + DRILL)
    page.wait_for_load_state("networkidle")
    assert not [u for u in watch.urls if "pyodide" in u or "drill-worker" in u or "harness.py" in u]
    page.click(".qbp-run")
    results = page.locator(".qbp-results li")
    expect(results).to_have_count(3, timeout=90_000)
    expect(page.locator(".qbp-run-status")).to_have_text(
        "0 of 3 tests pass (public tests; the edge cases open with a license).")
    expect(results.first).to_contain_text("NotImplementedError")
    assert [u.rsplit("/", 1)[1] for u in watch.urls if "/pyodide/" in u and "pyodide.asm.wasm" in u]

    _unlock(page, served_practice.keys.valid)
    wrong = (PRACTICE_CASE / "drills" / "token-bucket-admission" / "wrong.py").read_text()
    page.fill(".qbp-editor", wrong)
    page.click(".qbp-run")
    expect(page.locator(".qbp-run-status")).to_have_text("4 of 6 tests pass.", timeout=60_000)
    expect(page.locator(".qbp-fail").first).to_contain_text("edge_tests.test_idle_never_banks_more_than_burst")
    assert page.locator(".qbp-fail[data-qbp-suite=public_tests]").count() == 0
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator(".qbp-drill").screenshot(path=str(SHOTS / "drill-failing-desktop.png"))
    page.set_viewport_size({"width": 390, "height": 844})
    page.locator(".qbp-drill").screenshot(path=str(SHOTS / "drill-failing-phone.png"))

    page.click(".qbp-use-reference")
    page.click(".qbp-run")
    expect(page.locator(".qbp-run-status")).to_have_text("6 of 6 tests pass.", timeout=60_000)
    expect(page.locator(".qbp-fail")).to_have_count(0)
    # The record is written to IndexedDB after the status updates; a reload before the write lands
    # would (rightly) show no last run, so wait for the store as a reader's next visit would.
    _wait_for_saved(page, "token-bucket-admission", "summary", "6 of 6 tests pass.")
    page.reload()
    expect(page.locator(".qbp-run-status")).to_have_text("Last run on this device: 6 of 6 tests pass.")
    assert "class TokenBucket" in page.input_value(".qbp-editor")
    assert "min(self.burst" in page.input_value(".qbp-editor"), "the reference stays in the editor after a reload"

    # Editing after a run saves the draft without forgetting the run it followed.
    page.locator(".qbp-editor").press("Control+End")
    page.locator(".qbp-editor").type("\n# my note\n")
    _wait_for_saved(page, "token-bucket-admission", "code", "# my note")
    page.reload()
    expect(page.locator(".qbp-run-status")).to_have_text("Last run on this device: 6 of 6 tests pass.")
    assert "# my note" in page.input_value(".qbp-editor")
    assert watch.foreign(served_practice.url) == []
    assert watch.errors == []
    context.close()
