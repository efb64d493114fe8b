"""Every indexable page earns its place: enough text of its own, and not a near copy of another indexable page.

A page's *own text* is the words of its article that it does not share with other pages by design: breadcrumbs,
question lists (teasers repeat on every hub), calls to action and everything marked ``data-pagefind-ignore`` are
left out, as are the theme's navigation and footer. Overlap between two pages is the Jaccard similarity of their
own texts' word 5-shingles. A page with ``<meta name="robots" content="noindex">`` is not indexable and is not
measured (the sitemap leaves it out too).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from itertools import combinations

from lxml.html import HtmlElement

from ..problems import Problem, error
from .structure import NOT_FOUND, Parsed

MIN_OWN_WORDS = 150
"""Below this many words of its own an indexable page is thin (the issue's "at least ~150 words")."""
MAX_OVERLAP = 0.5
"""Above this share of shared 5-word shingles two indexable pages say the same thing."""
SHINGLE = 5
WORD_RE = re.compile(r"[A-Za-z0-9][\w'’.-]*")
DROPPED = " | ".join(
    [
        ".//nav", ".//header", ".//footer", ".//script", ".//style", ".//annotation", ".//*[@data-pagefind-ignore]",
        ".//*[contains(concat(' ', normalize-space(@class), ' '), ' headerlink ')]",
        ".//*[contains(concat(' ', normalize-space(@class), ' '), ' qb-counts ')]",
    ]
)


@dataclass(frozen=True)
class Measure:
    """One indexable page's own text: its word count and its shingles."""

    path: str
    words: int
    shingles: frozenset[tuple[str, ...]]


def indexable(tree: HtmlElement) -> bool:
    """False when the page asks search engines not to index it."""
    robots = " ".join(str(c) for c in tree.xpath("//head/meta[@name='robots']/@content")).lower()
    return "noindex" not in robots


def own_words(tree: HtmlElement) -> list[str]:
    """The words of the page's article that are its own (lists, crumbs, calls to action and chrome left out)."""
    articles = tree.xpath("//article")
    if not articles:
        return []
    article = copy.deepcopy(articles[0])
    for el in article.xpath(DROPPED):
        el.drop_tree()
    return [w.lower() for w in WORD_RE.findall(" ".join(article.itertext()))]


def measure(path: str, tree: HtmlElement) -> Measure:
    """A page's own-text figures."""
    ws = own_words(tree)
    grams = frozenset(tuple(ws[i : i + SHINGLE]) for i in range(max(0, len(ws) - SHINGLE + 1)))
    return Measure(path, len(ws), grams)


def overlap(a: Measure, b: Measure) -> float:
    """Jaccard similarity of two pages' own-text shingles."""
    if not a.shingles or not b.shingles:
        return 0.0
    return len(a.shingles & b.shingles) / len(a.shingles | b.shingles)


def measures(pages: list[Parsed], prefix: str = "") -> list[Measure]:
    """Own-text figures of every indexable page (the 404 page and noindex pages left out)."""
    return [measure(prefix + p.rel, p.tree) for p in pages if p.rel != NOT_FOUND and indexable(p.tree)]


def check_thin(
    pages: list[Parsed], prefix: str = "", min_words: int = MIN_OWN_WORDS, max_overlap: float = MAX_OVERLAP
) -> list[Problem]:
    """An error for each indexable page below ``min_words`` of its own, and for each pair above ``max_overlap``."""
    found = measures(pages, prefix)
    problems = [
        error(m.path, 0, 0, "page-thin",
              f"an indexable page with {m.words} words of its own (at least {min_words}): write more, or mark it "
              "noindex")
        for m in found
        if m.words < min_words
    ]
    for a, b in combinations(found, 2):
        share = overlap(a, b)
        if share > max_overlap:
            problems.append(error(a.path, 0, 0, "page-overlap",
                                  f"{share:.0%} of its own text is also on {b.path} (at most {max_overlap:.0%})"))
    return problems
