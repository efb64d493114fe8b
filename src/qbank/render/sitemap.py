"""sitemap.xml with ``lastmod`` from git (never the build time), and robots.txt."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from pathlib import Path

from .seo import PageMeta
from .settings import Settings
from .templating import fragment

RECORD = "\x1e"


def parse_git_log(output: str) -> dict[str, str]:
    """Path -> date of the newest commit touching it, from ``git log --name-only --format=%x1e%cs``."""
    dates: dict[str, str] = {}
    for record in output.split(RECORD):
        lines = [ln.strip() for ln in record.strip().splitlines() if ln.strip()]
        if not lines:
            continue
        date, paths = lines[0], lines[1:]
        for path in paths:
            dates.setdefault(path, date)  # newest first: the first date seen is the latest
    return dates


def git_lastmod(root: Path) -> dict[str, str]:
    """Last commit date (YYYY-MM-DD) per repository-relative path under ``root``; empty outside git."""
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "log", "--relative", "--name-only", f"--format={RECORD}%cs", "--", "."],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired):
        return {}
    return parse_git_log(out)


def page_lastmod(meta: PageMeta, dates: dict[str, str]) -> str | None:
    """The newest commit date among a page's sources, or None when none is committed."""
    return max((dates[p] for p in meta.sources if p in dates), default=None)


def sitemap_xml(pages: Iterable[PageMeta], dates: dict[str, str], settings: Settings) -> str:
    """The sitemap: indexable pages only, sorted by URL, each with its git ``lastmod`` when known."""
    urls = [
        (meta.canonical(settings), page_lastmod(meta, dates))
        for meta in sorted((m for m in pages if m.indexable), key=lambda m: m.canonical(settings))
    ]
    return fragment("sitemap.xml.j2", urls=urls)


def robots_txt(settings: Settings) -> str:
    """Allow everything; point crawlers at the sitemap."""
    return f"User-agent: *\nAllow: /\n\nSitemap: {settings.base}sitemap.xml\n"
