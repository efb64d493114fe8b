"""Numbers never bound automatically: quoted ones, and those in a sentence marked as a claim being tested.

A number inside quotation marks ("needs four H100 nodes", “…”) repeats someone else's claim, and a
sentence the author ends with ``{?}`` (or ``{?why}``) states a claim the answer tests, often to refute
it. Binding such a number to whatever verified value happens to equal it would lend that value's
authority to a number the answer may be arguing against, so these numbers need an explicit ``{=name}``
(the answer confirms the claim with that value) or a reasoned ``{!why}``.

Pure functions of the Markdown text: spans are character offsets; code (fenced and inline), HTML,
link targets and admonition titles hold no quotations.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from ..answers import code_fence_lines
from .extract import CODE_SPAN_RE, HTML_RE, LINK_TARGET_RE, Quantity

TESTED_RE = re.compile(r"\{\?(?P<why>[^{}\n]*)\}")
"""The tested-claim marker; renderers strip it with the other claim markers."""
# a quotation: straight or curly double quotes, within one paragraph (never across a blank line)
QUOTE_RE = re.compile(r'"(?:[^"\n]|\n(?![ \t]*\n))+?"|“(?:[^”\n]|\n(?![ \t]*\n))+?”')
ADMONITION_RE = re.compile(r"(?m)^[ \t]*(?:!!!|\?\?\?\+?)[^\n]*$")
# where the sentence before a position ends: a full stop, ! or ? (and closing quotes) then space, or a blank line
SENTENCE_END_RE = re.compile(r"[.!?][\"”')\]*_]*\s+|\n[ \t]*\n|^[ \t]*(?:#{1,6}|[-*+]|\d+[.)])[ \t]+", re.MULTILINE)


@dataclass(frozen=True)
class Held:
    """A span of text whose numbers are not bound automatically, and why."""

    start: int
    end: int
    why: str
    """'quoted' or 'tested'."""


def _masked(text: str) -> str:
    """The text with code, HTML, link targets and admonition titles blanked (same length)."""
    lines = text.split("\n")
    fenced = code_fence_lines(lines)
    out = "\n".join(" " * len(line) if code else line for line, code in zip(lines, fenced, strict=True))
    for pattern in (CODE_SPAN_RE, HTML_RE, LINK_TARGET_RE, ADMONITION_RE):
        out = pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), out)
    return out


def held_spans(text: str) -> list[Held]:
    """Every quotation and every sentence marked ``{?}`` in a Markdown document."""
    return list(_held_spans(text))


@lru_cache(maxsize=1 << 16)
def _held_spans(text: str) -> tuple[Held, ...]:
    """:func:`held_spans`, kept by text (`qbank serve` re-checks every answer and field on each save)."""
    masked = _masked(text)
    spans = [Held(m.start(), m.end(), "quoted") for m in QUOTE_RE.finditer(masked)]
    for m in TESTED_RE.finditer(masked):
        before = masked[: m.start()]
        ends = list(SENTENCE_END_RE.finditer(before))
        start = ends[-1].end() if ends else 0
        spans.append(Held(start, m.end(), "tested"))
    return tuple(spans)


def held_numbers(text: str, quantities: Iterable[Quantity]) -> dict[tuple[int, int], str]:
    """(line, col) of each quantity whose number lies in a quotation or a tested sentence -> why."""
    spans = held_spans(text)
    if not spans:
        return {}
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    out: dict[tuple[int, int], str] = {}
    for q in quantities:
        offset = starts[q.line - 1] + q.col - 1
        for span in spans:
            if span.start <= offset < span.end:
                out[(q.line, q.col)] = span.why
                break
    return out
