"""Sealing a rendered page: each ``.qb-premium`` div becomes a placeholder plus ciphertext in a file.

Contract with the renderer: with the paywall on, a question page's Markdown wraps each premium section
in ``<div class="qb-premium" data-qb-section="I" data-qb-heading="HEADING" markdown="1">``. The page's
HTML (after Markdown, before the theme and before search sees it) goes through :func:`seal_page`.
Any other premium part of a page (a code drill's reference solution, its edge-case tests) uses the
same div. Hub pages may show ``<span data-qb-unlock-count="N" data-qb-free="F">F</span>``: the browser
sets it to N once the reader's key opens the current release, and back to F (0 when absent) without one.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from .release import FORMAT, Release, b64

PREMIUM_CLASS = "qb-premium"
LOCKED_CLASS = "qb-locked"
PREMIUM_DIR = "assets/premium"
HEADING_ID_RE = re.compile(r"<h[1-6]\b[^>]*?\bid=\"([^\"]+)\"", re.IGNORECASE)
TAG_RE = re.compile(r"<[^>]*>")


class SealError(ValueError):
    """The page's premium markup cannot be sealed safely (nested or unclosed premium divs)."""


@dataclass(frozen=True)
class CiphertextFile:
    """A content-hashed file of one page's encrypted sections, at ``path`` under the site folder."""

    path: str
    content: bytes


@dataclass(frozen=True)
class PremiumFragment:
    """The plaintext of one premium section, kept in memory for the leak scan only."""

    page_path: str
    section: str
    heading: str
    html: str
    text: str


@dataclass
class SealedPage:
    """A page with its premium sections replaced by placeholders."""

    html: str
    files: list[CiphertextFile] = field(default_factory=list)
    fragments: list[PremiumFragment] = field(default_factory=list)
    hidden_ids: set[str] = field(default_factory=set)
    """Anchors of headings inside premium sections that must not appear in the table of contents."""


@dataclass
class _Span:
    start: int
    inner_start: int
    attrs: dict[str, str]
    inner_end: int = -1
    end: int = -1


class _PremiumFinder(HTMLParser):
    """Finds the extent of every premium div, counting nested divs to find its closing tag."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.text = text
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.spans: list[_Span] = []
        self.depth = 0

    def _offset(self) -> int:
        line, col = self.getpos()
        return self.line_starts[line - 1] + col

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "div":
            return
        a = {k: v or "" for k, v in attrs}
        classes = a.get("class", "").split()
        # a locked placeholder (the renderer's, with the paywall off) holds a notice, not premium text
        is_premium = PREMIUM_CLASS in classes and LOCKED_CLASS not in classes
        if self.depth:
            if is_premium:
                raise SealError(f"a premium section is nested inside another (line {self.getpos()[0]})")
            self.depth += 1
        elif is_premium:
            start = self._offset()
            self.spans.append(_Span(start, start + len(self.get_starttag_text() or ""), a))
            self.depth = 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        pass  # a self-closed div opens nothing

    def handle_endtag(self, tag: str) -> None:
        if tag != "div" or not self.depth:
            return
        self.depth -= 1
        if not self.depth:
            span = self.spans[-1]
            span.inner_end = self._offset()
            span.end = self.text.index(">", span.inner_end) + 1


def html_text(fragment: str) -> str:
    """Visible text of an HTML fragment, entities decoded, whitespace collapsed."""
    return " ".join(html.unescape(TAG_RE.sub(" ", fragment)).replace("¶", " ").split())


def about_words(text: str) -> int:
    """The word count shown on a placeholder, rounded to tens so it says 'about'."""
    return max(10, round(len(text.split()) / 10) * 10)


def placeholder(section: str, heading: str, heading_id: str | None, words: int, file_name: str, buy_url: str) -> str:
    """The locked placeholder of one section: its heading, its length and the call to action."""
    hid = f' id="{html.escape(heading_id)}"' if heading_id else ""
    s = html.escape(section)
    return (
        f'<section class="{PREMIUM_CLASS} {LOCKED_CLASS}" id="qb-premium-{s}" data-qb-section="{s}" '
        f'data-qb-file="{file_name}">\n'
        f"<h2{hid}>{html.escape(heading)}</h2>\n"
        f'<p class="qb-locked__meta">Premium section · about {words} words · included in a 6-month license</p>\n'
        f'<p class="qb-locked__actions"><button type="button" class="md-button md-button--primary qb-unlock-open"'
        f' hidden>Enter license key</button> <a class="md-button" href="{html.escape(buy_url)}">Get 6 months'
        f" of access</a></p>\n"
        f'<p class="qb-locked__status" role="status" aria-live="polite"></p>\n'
        f"</section>"
    )


def _find(page_html: str) -> list[_Span]:
    finder = _PremiumFinder(page_html)
    finder.feed(page_html)
    finder.close()
    if finder.depth:
        raise SealError("a premium section is never closed")
    return finder.spans


def premium_sections(page_html: str) -> int:
    """How many premium sections (not locked placeholders) a page's HTML holds."""
    return len(_find(page_html)) if PREMIUM_CLASS in page_html else 0


def seal_page(page_html: str, page_path: str, release: Release, *, buy_url: str = "/pricing/") -> SealedPage:
    """Replace every premium div of a page by a placeholder and return the ciphertext file it needs.

    ``page_path`` is the page's URL path on the deployed site (``/questions/slug/``); it is the
    associated data of each fragment, so the browser computes it from ``location.pathname``.
    """
    spans = _find(page_html)
    if not spans:
        return SealedPage(page_html)
    sealed = SealedPage(page_html)
    sections: dict[str, dict[str, str]] = {}
    pieces: list[tuple[_Span, str, str, str | None, int]] = []
    for n, span in enumerate(spans):
        section = span.attrs.get("data-qb-section") or str(n)
        if section in sections:
            raise SealError(f"two premium sections are numbered {section!r}")
        inner = page_html[span.inner_start : span.inner_end].strip()
        ids = HEADING_ID_RE.findall(inner)
        heading = span.attrs.get("data-qb-heading") or "Premium section"
        text = html_text(inner)
        nonce, ct = release.seal(inner, page_path, section)
        sections[section] = {"n": b64(nonce), "c": b64(ct)}
        sealed.fragments.append(PremiumFragment(page_path, section, heading, inner, text))
        # the section's own heading is public (it is on the placeholder); headings below it are not
        sealed.hidden_ids.update(ids[1:])
        pieces.append((span, section, heading, ids[0] if ids else None, about_words(text)))
    body = {"v": FORMAT, "release": release.release_id, "page": page_path, "sections": sections}
    content = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    name = hashlib.sha256(content).hexdigest()[:20] + ".json"
    sealed.files.append(CiphertextFile(f"{PREMIUM_DIR}/{name}", content))
    out: list[str] = []
    pos = 0
    for span, section, heading, hid, words in pieces:
        out.append(page_html[pos : span.start])
        out.append(placeholder(section, heading, hid, words, name, buy_url))
        pos = span.end
    out.append(page_html[pos:])
    sealed.html = "".join(out)
    return sealed
