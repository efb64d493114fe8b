"""Sealing a rendered page: each premium region becomes a placeholder plus ciphertext in a file.

Contract with the renderer (``qbank.seal.regions``): with the paywall on, a question page's Markdown
places each contributor part between region markers carrying the build's token: ``free`` parts (free
answer text, a free derivation) and ``premium`` ones (a ``/// premium`` block, a premium question's
derivation and kernel checks). The page's HTML (after Markdown, before the theme and before search
sees it) goes through :func:`seal_page`, which cuts marker to marker by exact string, sanitizes every
region (``qbank.seal.sanitize``) and replaces each premium one by its placeholder: the seal follows the
Markdown block, not the HTML inside it, so no ``</div>`` or comment in an answer can end it early.
Hub pages may show ``<span data-qb-unlock-count="N" data-qb-free="F">F</span>``: the browser sets it to
N once the reader's key opens the current release, and back to F (0 when absent) without one.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from dataclasses import dataclass, field

from ..mathml.render import render_math
from ..render.templating import fragment as render_fragment
from ..seal.nesting import nesting
from ..seal.regions import Region, RegionError, find_regions, rewrite
from ..seal.sanitize import sanitize_html
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


MARKER_LEFT = "<!--qbseal"


def balanced(page_html: str) -> str:
    """The page with closing tags that close nothing removed (Markdown closes an author's open raw block
    after the part it was opened in); a :class:`SealError` when an element is left open."""
    found = nesting(page_html)
    if found.open:
        raise SealError(f"the page's HTML does not nest outside its answer parts (<{found.open[-1]}> left open)")
    out, pos = [], 0
    for start, end in found.stray:
        if not re.fullmatch(r"</\w+\s*>", page_html[start:end]):
            raise SealError("the page's HTML does not nest outside its answer parts")
        out.append(page_html[pos:start])
        pos = end
    out.append(page_html[pos:])
    return "".join(out)


def html_text(fragment: str) -> str:
    """Visible text of an HTML fragment, entities decoded, whitespace collapsed."""
    return " ".join(html.unescape(TAG_RE.sub(" ", fragment)).replace("¶", " ").split())


def about_words(text: str) -> int:
    """The word count shown on a placeholder, rounded to tens so it says 'about'."""
    return max(10, round(len(text.split()) / 10) * 10)


def placeholder(
    section: str,
    heading: str,
    heading_id: str | None,
    words: int,
    file_name: str,
    buy_url: str,
    summary: str = "",
    first: bool = True,
) -> str:
    """The locked placeholder of one section: its heading, its free summary, its length and, on the page's
    first locked section only, the one unlock call to action (the others point back to it)."""
    return render_fragment(
        "sealed-placeholder.html.j2", premium_class=PREMIUM_CLASS, locked_class=LOCKED_CLASS, section=section,
        file_name=file_name, heading=heading, heading_id=heading_id, summary=summary, words=words, first=first,
        buy_url=buy_url,
    ).rstrip("\n")


def seal_page(
    page_html: str, page_path: str, release: Release, token: str, *, buy_url: str = "/pricing/"
) -> SealedPage:
    """Sanitize every region of a page and replace each premium one by a placeholder and ciphertext.

    ``page_path`` is the page's URL path on the deployed site (``/questions/slug/``); it is the
    associated data of each fragment, so the browser computes it from ``location.pathname``.
    ``token`` is the build's region token (the renderer's ``Settings.seal_token``).
    """
    try:
        regions = find_regions(page_html, token)
    except RegionError as exc:
        raise SealError(str(exc)) from exc
    sealed = SealedPage(page_html)
    if not regions:
        if MARKER_LEFT in page_html:
            raise SealError("region markers of another build are on this page (token mismatch): nothing is sealed")
        return sealed
    # math is typeset after sanitizing (which drops <math>) and before sealing: decrypted text shows no raw TeX
    clean = {(r.kind, r.index): render_math(sanitize_html(page_html[r.inner_start : r.inner_end])) for r in regions}
    premium = [r for r in regions if r.kind == "premium"]
    sections: dict[str, dict[str, str]] = {}
    words_of: dict[str, int] = {}
    ids_of: dict[str, str | None] = {}
    for r in premium:
        section = str(r.index)
        inner = clean[(r.kind, r.index)].strip()
        ids = HEADING_ID_RE.findall(inner)
        heading = r.heading or "Premium section"
        text = html_text(inner)
        nonce, ct = release.seal(inner, page_path, section)
        sections[section] = {"n": b64(nonce), "c": b64(ct)}
        sealed.fragments.append(PremiumFragment(page_path, section, heading, inner, text))
        # the section's own heading is public (it is on the placeholder); headings below it are not
        sealed.hidden_ids.update(ids[1:])
        words_of[section] = about_words(text)
        ids_of[section] = ids[0] if ids else None
    name = ""
    if sections:
        body = {"v": FORMAT, "release": release.release_id, "page": page_path, "sections": sections}
        content = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
        name = hashlib.sha256(content).hexdigest()[:20] + ".json"
        sealed.files.append(CiphertextFile(f"{PREMIUM_DIR}/{name}", content))

    first_premium = premium[0].index if premium else None

    def replace(r: Region, inner: str) -> str:
        if r.kind != "premium":
            return clean[(r.kind, r.index)]
        s = str(r.index)
        return placeholder(
            s, r.heading or "Premium section", ids_of[s], words_of[s], name, buy_url,
            summary=r.summary, first=r.index == first_premium,
        )

    out = rewrite(page_html, regions, replace)
    if MARKER_LEFT in out:
        raise SealError("a region marker is left outside the regions (token mismatch or a marker out of place)")
    sealed.html = balanced(out)
    return sealed


def premium_regions(page_html: str, token: str) -> int:
    """How many premium regions a page's HTML holds (a :class:`SealError` when its markers are broken)."""
    try:
        return sum(r.kind == "premium" for r in find_regions(page_html, token))
    except RegionError as exc:
        raise SealError(str(exc)) from exc
