"""How a page's tags nest: closing tags that close nothing open, and elements left open.

The reference is Python's ``HTMLParser`` (what :func:`nesting` always answered): every tag's name as it
reads it, a void element never opened, a closing tag that does not close the innermost open element counted
as stray. Walking a page through it costs about 0.7 ms of a build's 10 to 14 ms per page, so the common case
goes first through one regular expression: a page whose every ``<`` starts a start tag with quoted or plain
attributes or a bare closing tag, with no ``<script>`` or ``<style>`` (the parser reads those as raw text) and
no comment or declaration, is tokenised the same way by both, and when that walk finds nothing stray and
nothing open, that is the answer. Anything else (a stray tag, an open element, any markup outside that
grammar) is walked again by ``HTMLParser``, so a stray tag's position always comes from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
RAW_TEXT = {"script", "style"}
"""Elements whose content ``HTMLParser`` reads as text up to their closing tag."""

_NAME = r"[a-zA-Z][-.a-zA-Z0-9:_]*"
_ATTRIBUTE = r"""\s+[^\s"'>/=<`]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`/]+(?=[\s>])))?"""
TAG = re.compile(rf"<(?:(?P<start>{_NAME})(?:{_ATTRIBUTE})*\s*(?P<self>/?)|/(?P<end>{_NAME})\s*)>")


@dataclass(frozen=True)
class Nesting:
    """Where a page's closing tags close nothing (start and end offsets), and what is left open, innermost last."""

    stray: list[tuple[int, int]]
    open: list[str]


class _Walk(HTMLParser):
    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.stack: list[str] = []
        self.stray: list[tuple[int, int]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if self.stack and self.stack[-1] == tag:
            self.stack.pop()
        else:
            line, col = self.getpos()
            start = self.line_starts[line - 1] + col
            self.stray.append((start, start + len(f"</{tag}>")))


def parsed(page_html: str) -> Nesting:
    """The nesting as ``HTMLParser`` reads it."""
    walk = _Walk(page_html)
    walk.feed(page_html)
    walk.close()
    return Nesting(walk.stray, walk.stack)


def plainly_nested(page_html: str) -> bool:
    """Whether the page is in the plain grammar above and nests: every element closed, no stray closing tag.
    False says only "ask ``HTMLParser``"."""
    stack: list[str] = []
    tags = 0
    for m in TAG.finditer(page_html):
        tags += 1
        name = (m.group("start") or m.group("end")).lower()
        if m.group("start"):
            if name in RAW_TEXT:
                return False
            if name in VOID:
                continue
            if not m.group("self"):
                stack.append(name)
                continue
        elif name in VOID:
            continue
        elif not stack or stack[-1] != name:
            return False
        else:
            stack.pop()
    # every `<` starts one of the tags walked: no comment, declaration, stray `<` or tag outside the grammar
    return not stack and tags == page_html.count("<")


def nesting(page_html: str) -> Nesting:
    """The page's stray closing tags and open elements, as ``HTMLParser`` reads them."""
    return Nesting([], []) if plainly_nested(page_html) else parsed(page_html)
