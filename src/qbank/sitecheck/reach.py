"""Reachability on the built site: every page within three clicks of the home page, no orphans."""

from __future__ import annotations

from collections import deque
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from ..problems import Problem, error
from .structure import NOT_FOUND, Parsed, html_pages

MAX_CLICKS = 3
LOCAL = "http://site.invalid/"


def link_graph(pages: list[Parsed]) -> dict[str, set[str]]:
    """Page URL -> URLs of the site's pages it links to."""
    known = {p.url for p in pages}
    graph: dict[str, set[str]] = {}
    for page in pages:
        out: set[str] = set()
        for href in page.tree.xpath("//a/@href"):
            target = urlsplit(urljoin(LOCAL + page.url, str(href)))
            if f"{target.scheme}://{target.netloc}/" != LOCAL:
                continue
            path = target.path.lstrip("/")
            if path.endswith("index.html"):
                path = path[: -len("index.html")]
            if path in known and path != page.url:
                out.add(path)
        graph[page.url] = out
    return graph


def clicks_from_home(graph: dict[str, set[str]]) -> dict[str, int]:
    """Fewest clicks from the home page to each reachable page."""
    depth = {"": 0}
    queue = deque([""])
    while queue:
        url = queue.popleft()
        for nxt in graph.get(url, ()):
            if nxt not in depth:
                depth[nxt] = depth[url] + 1
                queue.append(nxt)
    return depth


def check_reach(site_dir: Path, pages: list[Parsed] | None = None) -> list[Problem]:
    """Orphans (unreachable from home) and pages deeper than three clicks."""
    parsed = [p for p in (pages if pages is not None else html_pages(site_dir)) if p.rel != NOT_FOUND]
    depth = clicks_from_home(link_graph(parsed))
    problems = []
    for page in parsed:
        path = f"{site_dir.name}/{page.rel}"
        if page.url not in depth:
            problems.append(error(path, 0, 0, "page-orphan", "no chain of links from the home page reaches this page"))
        elif depth[page.url] > MAX_CLICKS:
            problems.append(
                error(path, 0, 0, "page-deep", f"{depth[page.url]} clicks from the home page (at most {MAX_CLICKS})")
            )
    return problems
