"""The HTML sanitizer for contributors' parts of a page: an allowlist, kept by ``nh3`` (ammonia).

It runs on each answer part's HTML after Markdown and before the theme, so Markdown's own output
(headings with ids and permalinks, tables, code highlighting spans, admonitions, details, KaTeX
spans of arithmatex) passes unchanged, and raw HTML an author typed is cut down to the same
vocabulary: no ``<style>``, ``<meta>``, ``<base>``, ``<link>``, ``<form>``, ``<iframe>``,
``<object>``, ``<script>``, no event handlers, ``style`` only as a table cell's ``text-align``, no
``javascript:`` URLs, no site classes (``qb-*``, ``md-*``: no fake unlock box), no ``qb-`` ids, and
no stray closing tags (the fragment is parsed and written back balanced).
"""

from __future__ import annotations

import nh3
from pygments.token import STANDARD_TYPES  # type: ignore[import-untyped]  # (mkdocs-material needs pygments)

TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "div", "dl", "dt", "em",
    "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li",
    "mark", "ol", "p", "pre", "q", "s", "small", "span", "strong", "sub", "summary", "sup", "table",
    "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul",
}  # fmt: skip
DROPPED_WITH_CONTENT = {
    "script", "style", "template", "textarea", "title", "noscript", "iframe", "object", "embed",
    "svg", "math", "xmp", "noembed", "noframes", "plaintext", "select", "option",
}  # fmt: skip
HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
ATTRIBUTES: dict[str, set[str]] = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title", "width", "height"},
    "td": {"style", "colspan", "rowspan"},
    "th": {"style", "colspan", "rowspan"},
    "ol": {"start"},
    "details": {"open"},
    "code": {"title"},
    **{h: {"id"} for h in HEADINGS},
}
ADMONITIONS = {
    "note", "abstract", "summary", "tldr", "info", "todo", "tip", "hint", "important", "success",
    "check", "done", "question", "help", "faq", "warning", "caution", "attention", "failure", "fail",
    "missing", "danger", "error", "bug", "example", "quote", "cite",
}  # fmt: skip
PYGMENTS = {c for c in STANDARD_TYPES.values() if c}
CLASSES: dict[str, set[str]] = {
    "span": PYGMENTS | {"arithmatex", "filename", "hll", "linenos", "normal", "special"},
    "div": {"highlight", "arithmatex", "admonition", "admonition-title", *ADMONITIONS},
    "p": {"admonition-title"},
    "details": ADMONITIONS,
    "a": {"headerlink"},
    "code": {"highlight"},
    "pre": {"highlight"},
    "table": {"highlighttable"},
    "td": {"linenos", "code"},
}
URL_SCHEMES = {"http", "https", "mailto"}


def _attribute(tag: str, name: str, value: str) -> str | None:
    if name == "id" and value.lower().startswith(("qb-", "__")):
        return None  # the paywall's own anchors (qb-premium-N) are not the author's to claim
    return value


def sanitize_html(fragment: str) -> str:
    """The fragment with everything outside the allowlist removed, written back balanced."""
    return nh3.clean(
        fragment,
        tags=TAGS,
        clean_content_tags=DROPPED_WITH_CONTENT,
        attributes=ATTRIBUTES,
        attribute_filter=_attribute,
        strip_comments=True,
        link_rel=None,
        url_schemes=URL_SCHEMES,
        allowed_classes=CLASSES,
        filter_style_properties={"text-align"},
    )
