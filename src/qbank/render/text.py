"""Small text helpers shared by the page renderers."""

from __future__ import annotations

import html
import json
import re

MARKER_RE = re.compile(r"\{[=!?][^{}\n]*\}")
"""Claim markers (``{=name}``, ``{!reason}``, ``{?}``) that bind, exempt or hold numbers; never shown to readers."""



def strip_markers(markdown: str) -> str:
    """Remove claim markers from Markdown."""
    return MARKER_RE.sub("", markdown)


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 question``, ``2 questions``."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def counts(total: int, free: int) -> str:
    """The ``N questions · M unlocked for you`` line; the paywall's JS shows N in the marked span once unlocked."""
    from .templating import fragment

    return fragment("counts.html.j2", total_text=plural(total, "question"), total=total, free=free)


def words(markdown: str) -> int:
    """Approximate word count of Markdown text."""
    return len(re.findall(r"[A-Za-z0-9][\w'’.-]*", markdown))


def approx_words(markdown: str) -> int:
    """Word count rounded to tens (at least 10), for a placeholder that must not reveal the exact text."""
    return max(10, round(words(markdown) / 10) * 10)


def fit(candidates: tuple[str, ...], limit: int, least: int = 1) -> str:
    """The first candidate whose length lies in ``least..limit``, whole (by default any that is not empty once
    its whitespace is collapsed); else the last one, whole, for the built-site check to report (a title or
    description is never cut mid-word)."""
    texts = [" ".join(c.split()) for c in candidates]
    return next((t for t in texts if least <= len(t) <= limit), texts[-1])


def url_of(path: str) -> str:
    """Site-relative URL of a docs-relative Markdown path (directory URLs)."""
    if path == "index.md":
        return ""
    stem = path[: -len(".md")]
    if stem.endswith("/index"):
        stem = stem[: -len("/index")]
    return stem + "/"


def rel(src: str, dst: str) -> str:
    """A link from one docs-relative Markdown file to another, as mkdocs resolves it.

    Pure string work (``posixpath.relpath`` consults the working directory on every call).
    """
    base = src.split("/")[:-1]
    target = dst.split("/")
    i = 0
    while i < len(base) and i < len(target) - 1 and base[i] == target[i]:
        i += 1
    return "/".join([".."] * (len(base) - i) + target[i:])


def attr(text: str) -> str:
    """Escape for an HTML attribute value (the theme writes the page description into one as it is)."""
    return html.escape(text, quote=True)


def yaml_str(text: str) -> str:
    """A YAML scalar for front matter (JSON strings are valid YAML)."""
    return json.dumps(text, ensure_ascii=False)


def md_escape(text: str) -> str:
    """Escape Markdown link-text metacharacters in a title."""
    return re.sub(r"([\\`*_\[\]<>])", r"\\\1", text)
