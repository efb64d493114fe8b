"""`qbank serve`: the live preview reflects saves, shows problems on the page and in the terminal, and clears them."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from qbank.build import build_site

from .conftest import CASES, make_site_repo

SLUG = "kv-block-waste"  # a premium question of the site fixture
PAGE = f"questions/{SLUG}/"
DEADLINE_S = 40.0
T = TypeVar("T")


class Preview:
    """A running `qbank serve` subprocess and its terminal output."""

    def __init__(self, root: Path, log: Path) -> None:
        self.root, self.log = root, log
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.out = log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "qbank.cli", "serve", "--root", str(root), "--port", "0"],
            stdout=self.out,
            stderr=subprocess.STDOUT,
            env=env,
        )
        match = self.wait_for(lambda: re.search(r"previewing .* at (http://\S+)", self.terminal()))
        self.url = match.group(1)

    def terminal(self) -> str:
        """Everything the server printed so far."""
        return self.log.read_text()

    def get(self, path: str) -> str:
        """The served page at ``path``."""
        with urllib.request.urlopen(self.url + path, timeout=10) as resp:
            return str(resp.read().decode())

    def wait_for(self, probe: Callable[[], T | None]) -> T:
        """Poll ``probe`` until it returns something truthy, within a deadline."""
        end = time.monotonic() + DEADLINE_S
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise AssertionError(f"qbank serve exited ({self.proc.returncode}):\n{self.terminal()}")
            try:
                value = probe()
            except (urllib.error.URLError, ConnectionError):
                value = None
            if value:
                return value
            time.sleep(0.2)
        raise AssertionError(f"timed out after {DEADLINE_S} s; terminal:\n{self.terminal()}")

    def page_when(self, cond: Callable[[str], bool]) -> str:
        """The question page, once ``cond`` holds for it."""
        return self.wait_for(lambda: (lambda html: html if cond(html) else None)(self.get(PAGE)))

    def stop(self) -> None:
        """SIGTERM (handled as Ctrl-C); killed if it does not stop."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.out.close()


@pytest.fixture
def preview(tmp_path: Path) -> Iterator[Preview]:
    """`qbank serve` over a copy of the site fixture, on a free port; stopped at teardown."""
    server = Preview(make_site_repo(tmp_path / "repo", CASES / "site"), tmp_path / "terminal.log")
    try:
        yield server
    finally:
        server.stop()


def banner(html: str) -> str:
    """The preview banner of a page ('' when there is none)."""
    m = re.search(r'<div class="qb-preview-banner".*?</div>', html, re.DOTALL)
    return m.group(0) if m else ""


def test_preview_reflects_edits_and_problems(preview: Preview) -> None:
    answer = preview.root / "answers" / f"{SLUG}.md"
    html = preview.get(PAGE)
    assert "SECRET-PREMIUM-BLOCK-WASTE" in html  # premium shown in preview...
    assert "preview: premium shown" in html  # ...under its marker
    assert "livereload" in html and "qb-preview-error" not in banner(html)  # the fixture has a warning only
    assert 'http-equiv="Content-Security-Policy"' not in html  # the live-reload script is inline

    original = answer.read_text()
    edited = original.replace("for less waste.", "for less waste. FRESH-EDIT-7781.")
    assert edited != original
    answer.write_text(edited)
    preview.page_when(lambda h: "FRESH-EDIT-7781" in h)
    counts = re.findall(r"(\d+)/(\d+) pages rendered", preview.terminal())
    assert int(counts[0][0]) == int(counts[0][1])  # the first build renders every page
    assert any(0 < int(n) < int(m) for n, m in counts[1:])  # a save re-renders only the pages it changed

    broken = edited.replace("\n///\n", "\n")  # the premium block is no longer closed
    answer.write_text(broken)
    where = f"answers/{SLUG}.md:3:1"
    html = preview.page_when(lambda h: "premium-unclosed" in banner(h))
    assert where in banner(html)
    line = f"{where}: error: premium block is never closed; end it with a line '///' [premium-unclosed]"
    preview.wait_for(lambda: line in preview.terminal())
    assert "premium-unclosed" in banner(preview.get(""))  # the home page's site-wide banner lists it too
    assert "1 error" in banner(preview.get(""))

    answer.write_text(edited)
    html = preview.page_when(lambda h: "qb-preview-error" not in banner(h))
    assert "FRESH-EDIT-7781" in html
    assert preview.proc.poll() is None


def test_build_refuses_the_preview_flag(tmp_path: Path) -> None:
    root = make_site_repo(tmp_path / "repo", CASES / "site")
    config = root / "mkdocs.yml"
    config.write_text(config.read_text().replace("  qbank:\n", "  qbank:\n    preview: true\n", 1))
    result = build_site(root)
    assert result.site_dir is None
    assert not (root / "site").exists()
    assert any(p.code == "build-failed" and "preview" in p.message for p in result.report.problems)


def test_plain_mkdocs_build_refuses_the_preview_flag_without_a_serve_loop(tmp_path: Path) -> None:
    root = make_site_repo(tmp_path / "repo", CASES / "site")
    config = root / "mkdocs.yml"
    config.write_text(config.read_text().replace("  qbank:\n", "  qbank:\n    preview: true\n", 1))
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(tmp_path / "out")],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode != 0
    assert "no `qbank serve` is running" in run.stderr
    assert not list(tmp_path.glob("out/**/*.html"))


def test_a_save_re_renders_only_the_pages_it_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In process, as the serve loop calls it: an unchanged rebuild renders nothing, one edited answer renders
    its page alone (every generated page's Markdown carries the seal token, so a token drawn per build made
    every save re-render every question page)."""
    import logging

    from qbank.preview import close_session, open_session
    from qbank.preview.serve import rebuild

    root = make_site_repo(tmp_path / "repo", CASES / "site")
    site = tmp_path / "site"
    monkeypatch.chdir(root)
    logging.getLogger("mkdocs").setLevel(logging.ERROR)
    open_session(root)
    try:
        first = rebuild(root, site, "http://127.0.0.1:8000/")
        assert first.failure is None and first.rendered == first.pages > 3
        cards = {p.name: p.stat().st_mtime_ns for p in (site / "assets" / "cards").glob("*.png")}
        again = rebuild(root, site, "http://127.0.0.1:8000/")
        assert again.rendered == 0, again
        answer = root / "answers" / f"{SLUG}.md"
        answer.write_text(answer.read_text().replace("for less waste.", "for less waste. FRESH-EDIT-4410."))
        edited = rebuild(root, site, "http://127.0.0.1:8000/")
        assert edited.rendered == 1, edited
        assert "FRESH-EDIT-4410" in (site / PAGE / "index.html").read_text()
        # social cards: the edited page's is drawn again, every kept page keeps its own
        now = {p.name: p.stat().st_mtime_ns for p in (site / "assets" / "cards").glob("*.png")}
        redrawn = {name for name, mtime in now.items() if mtime != cards.get(name)}
        assert redrawn == {f"questions-{SLUG}.png"} and len(cards) > 5
    finally:
        close_session(root)
