"""Region markers: the renderer's structural contract with the sealer.

Every part of a question page that comes from contributors (a free answer part, a premium section,
a derivation) is placed in the page's Markdown between two HTML comments that carry a per-build
random token::

    <!--qbseal TOKEN open premium 2 HEADING_HEX SUMMARY_HEX-->
    ... the part's Markdown ...
    <!--qbseal TOKEN close premium 2-->

Markdown passes the comments through untouched, so after rendering the sealer cuts marker to marker
by exact string: everything the author wrote between ``/// premium`` and ``///`` is inside, whatever
HTML it holds (``</div>``, ``<!--``, a fake marker: content cannot know the token, which is drawn when
the build starts and never written out). Anything unexpected about the markers (a marker missing,
escaped by Markdown, repeated, out of order, nested) is a :class:`RegionError`: the page is refused,
never published half-sealed.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass

KINDS = ("free", "premium", "preview")
"""free: published after sanitizing; premium: sanitized then sealed; preview: `qbank serve` only."""
TOKEN_RE = re.compile(r"[0-9a-f]{32}")


class RegionError(ValueError):
    """The page's region markers are not exactly the ones the renderer wrote."""


@dataclass(frozen=True)
class Region:
    """One marked part of a rendered page (offsets into the page's HTML)."""

    kind: str
    index: int
    heading: str
    start: int
    inner_start: int
    inner_end: int
    end: int
    summary: str = ""
    """A premium section's free one-line summary (public: the locked placeholder shows it)."""


def new_token() -> str:
    """A fresh token for one build (128 random bits)."""
    return secrets.token_hex(16)


def _open(token: str, kind: str, index: int, heading: str, summary: str = "") -> str:
    tail = f" {summary.encode().hex()}" if summary else ""
    return f"<!--qbseal {token} open {kind} {index} {heading.encode().hex() or '-'}{tail}-->"


def _close(token: str, kind: str, index: int) -> str:
    return f"<!--qbseal {token} close {kind} {index}-->"


def wrap(token: str, kind: str, index: int, markdown: str, heading: str = "", summary: str = "") -> str:
    """A part's Markdown between its markers, blank lines around each so Markdown keeps them as blocks."""
    if kind not in KINDS or not TOKEN_RE.fullmatch(token):
        raise ValueError(f"bad region {kind!r} or token")
    opener = _open(token, kind, index, heading, summary)
    return f"\n{opener}\n\n{markdown.strip()}\n\n{_close(token, kind, index)}\n"


def find_regions(html: str, token: str) -> list[Region]:
    """Every region of a rendered page, in order; a :class:`RegionError` unless the markers are intact."""
    if not TOKEN_RE.fullmatch(token):
        if "<!--qbseal" in html:
            raise RegionError("region markers on a page but no region token for this build")
        return []  # a page mkdocs renders without qbank's renderer (hand-written): no regions
    open_re = re.compile(rf"<!--qbseal {token} open ({'|'.join(KINDS)}) (\d+) ([0-9a-f]+|-)(?: ([0-9a-f]+))?-->")
    regions: list[Region] = []
    pos = 0
    seen: set[tuple[str, int]] = set()
    while True:
        m = open_re.search(html, pos)
        if m is None:
            break
        kind, index = m.group(1), int(m.group(2))
        if (kind, index) in seen:
            raise RegionError(f"{kind} region {index} is marked twice")
        seen.add((kind, index))
        close = _close(token, kind, index)
        end_at = html.find(close, m.end())
        if end_at < 0:
            raise RegionError(f"region {index} ({kind}) has no end marker after rendering")
        if token in html[m.end() : end_at]:
            raise RegionError(f"region {index} ({kind}) holds another marker")
        heading = "" if m.group(3) == "-" else bytes.fromhex(m.group(3)).decode("utf-8", errors="replace")
        summary = bytes.fromhex(m.group(4)).decode("utf-8", errors="replace") if m.group(4) else ""
        regions.append(Region(kind, index, heading, m.start(), m.end(), end_at, end_at + len(close), summary))
        pos = end_at + len(close)
    # every occurrence of the token must be one of the markers matched above (none escaped or stray)
    if html.count(token) != 2 * len(regions):
        raise RegionError("a region marker was altered by rendering (escaped, split or stray)")
    return regions


def rewrite(html: str, regions: list[Region], replace: Callable[[Region, str], str]) -> str:
    """The page with each region (markers included) replaced by ``replace(region, inner_html)``."""
    out: list[str] = []
    pos = 0
    for r in regions:
        out.append(html[pos : r.start])
        out.append(replace(r, html[r.inner_start : r.inner_end]))
        pos = r.end
    out.append(html[pos:])
    return "".join(out)
