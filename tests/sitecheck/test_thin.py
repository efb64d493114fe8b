"""The own-text and overlap check of indexable pages."""

from __future__ import annotations

import lxml.html

from qbank.sitecheck.structure import Parsed
from qbank.sitecheck.thin import check_thin, measure, overlap

WORDS = [
    "prefill",
    "decode",
    "cache",
    "block",
    "token",
    "batch",
    "kernel",
    "roofline",
    "memory",
    "bandwidth",
    "latency",
    "throughput",
    "draft",
    "target",
    "expert",
    "router",
    "shard",
    "replica",
    "tensor",
    "pipeline",
]


def page(rel: str, own: str, listed: str = "", noindex: bool = False) -> Parsed:
    robots = '<meta name="robots" content="noindex">' if noindex else ""
    html = (
        f"<html><head>{robots}</head><body><header>Site name Search</header><nav>Home Topics</nav>"
        f'<article><nav class="qb-crumbs">Home › Topics</nav><h1>T</h1><p>{own}</p>'
        f'<div class="qb-list" data-pagefind-ignore>{listed}</div>'
        f'<p class="qb-counts">3 questions · 1 unlocked for you</p></article><footer>About Terms</footer></body></html>'
    )
    return Parsed(rel, rel, lxml.html.fromstring(html))


def text(n: int, offset: int = 0) -> str:
    return " ".join(f"{WORDS[(i + offset) % len(WORDS)]}{(i + offset) // len(WORDS)}" for i in range(n))


def test_only_the_pages_own_words_count() -> None:
    m = measure("a.html", page("a.html", text(40), listed=text(500, 1000)).tree)
    assert m.words == 1 + 40  # the h1 and the paragraph; lists, crumbs, counts and chrome left out


def test_thin_and_overlapping_indexable_pages_fail_noindex_ones_do_not() -> None:
    pages = [
        page("thin.html", text(30)),
        page("full.html", text(200)),
        page("copy.html", text(200) + " and one more sentence of its own"),
        page("other.html", text(200, 5000)),
        page("hidden.html", text(10), noindex=True),
    ]
    problems = check_thin(pages, "site/", 150, 0.5)
    assert sorted((p.path, p.code) for p in problems) == [
        ("site/full.html", "page-overlap"),
        ("site/thin.html", "page-thin"),
    ]
    full, copy = measure("f", pages[1].tree), measure("c", pages[2].tree)
    assert overlap(full, copy) > 0.9 and overlap(full, measure("o", pages[3].tree)) == 0
