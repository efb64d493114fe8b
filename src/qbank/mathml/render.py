"""TeX to MathML at build time, with the output cut down to a MathML allowlist.

``pymdownx.arithmatex`` (generic mode) leaves ``<span class="arithmatex">\\(…\\)</span>`` and
``<div class="arithmatex">\\[…\\]</div>`` in the HTML. :func:`render_math` replaces the TeX inside each with
MathML from ``latex2mathml``, which browsers lay out natively (MathML Core), so pages need no script or
font for math. The converter passes some input straight through (``\\text{<img …>}`` becomes markup,
``\\href{javascript:…}`` an ``href`` attribute), and the TeX comes from contributors, so its output is
cleaned by ``nh3`` against the MathML presentation vocabulary: no HTML elements, no URLs, no styles.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache

import nh3
from latex2mathml.converter import convert

MATH_RE = re.compile(r'<(span|div) class="arithmatex">([^<]*)</\1>')
DELIMITERS = {r"\(": r"\)", r"\[": r"\]", "$$": "$$", "$": "$"}

TAGS = {
    "math", "mrow", "mi", "mn", "mo", "mtext", "mspace", "ms", "msup", "msub", "msubsup", "mfrac", "msqrt",
    "mroot", "mover", "munder", "munderover", "mtable", "mtr", "mtd", "mstyle", "mpadded", "mphantom",
    "menclose", "merror", "semantics", "annotation",
}  # fmt: skip
PRESENTATION = {
    "mathvariant", "stretchy", "fence", "separator", "lspace", "rspace", "accent", "accentunder", "movablelimits",
    "largeop", "symmetric", "minsize", "maxsize", "displaystyle", "scriptlevel", "width", "height", "depth",
    "linethickness", "columnalign", "rowalign", "columnspacing", "rowspacing", "columnlines", "rowlines",
    "frame", "notation", "form",
}  # fmt: skip
ATTRIBUTES: dict[str, set[str]] = {tag: set(PRESENTATION) for tag in TAGS}
ATTRIBUTES["math"] = PRESENTATION | {"display"}
ATTRIBUTES["annotation"] = {"encoding"}


class MathError(ValueError):
    """TeX that does not convert: the build stops rather than show raw TeX."""


def split_tex(inner: str) -> tuple[str, bool]:
    """The TeX of an arithmatex element (HTML-escaped, with its delimiters) and whether it is display math."""
    text = html.unescape(inner).strip()
    for left, right in DELIMITERS.items():
        if text.startswith(left) and text.endswith(right) and len(text) >= len(left) + len(right):
            return text[len(left) : len(text) - len(right)].strip(), left in (r"\[", "$$")
    raise MathError(f"math without delimiters: {text[:80]!r}")


@lru_cache(maxsize=4096)
def to_mathml(tex: str, display: bool) -> str:
    """One formula as MathML, cleaned to the allowlist (its TeX kept as an annotation for copy and search).

    Remembered per (TeX, display): a bank repeats its symbols ($L$, $B$, $b$), and half the bank's 670 formulas
    repeat one written elsewhere. A formula that fails is not remembered (it raises)."""
    try:
        raw = convert(tex, display="block" if display else "inline")
    except Exception as exc:  # the converter raises a variety of its own and built-in errors
        raise MathError(f"cannot typeset {tex[:80]!r}: {exc}") from exc
    body = raw[raw.index(">") + 1 : raw.rindex("</math>")]
    annotated = (
        f'<math display="{"block" if display else "inline"}"><semantics><mrow>{body}</mrow>'
        f'<annotation encoding="application/x-tex">{html.escape(tex)}</annotation></semantics></math>'
    )
    return nh3.clean(annotated, tags=TAGS, attributes=ATTRIBUTES, strip_comments=True, link_rel=None)


MATH_ONLY_HEADER_RE = re.compile(r'(<th\b[^>]*>)(\s*(?:<span class="arithmatex">[^<]*</span>\s*)+)(</th>)')
TOKEN_RE = re.compile(r"<(mi|mn|mo|mtext)\b[^>]*>([^<]*)</\1>")


def spoken(mathml: str) -> str:
    """A formula's visible tokens in order ("γ = 3"): the accessible name of a formula that names a column."""
    presentation = mathml.split("<annotation", 1)[0]
    return " ".join(html.unescape(t).strip() for _, t in TOKEN_RE.findall(presentation) if t.strip())


def render_math(page_html: str) -> str:
    """Every arithmatex element of an HTML page or fragment with its TeX replaced by MathML. A table header cell
    that holds only math gets its formulas named (``aria-label``): accessibility tools give MathML no text, so the
    column would have no name (axe's ``empty-table-header``)."""

    def one(m: re.Match[str], named: bool = False) -> str:
        tex, display = split_tex(m.group(2))
        mathml = to_mathml(tex, display)
        if named:
            mathml = mathml.replace("<math ", f'<math aria-label="{html.escape(spoken(mathml))}" ', 1)
        return f'<{m.group(1)} class="arithmatex">{mathml}</{m.group(1)}>'

    def header(m: re.Match[str]) -> str:
        return m.group(1) + MATH_RE.sub(lambda x: one(x, named=True), m.group(2)) + m.group(3)

    return MATH_RE.sub(one, MATH_ONLY_HEADER_RE.sub(header, page_html))
