"""A table header cell that holds only math names its formulas: accessibility tools give MathML no text, so the
column would have no name (axe-core's empty-table-header, found on four question pages of the built site)."""

from __future__ import annotations

import html
import re

from lxml import html as lxml_html

from qbank.mathml.render import render_math


def _cell(tex: str, before: str = "") -> str:
    """A header cell as arithmatex leaves it: the TeX HTML-escaped between its delimiters."""
    return f'<th>{before}<span class="arithmatex">{html.escape(chr(92) + "(" + tex + chr(92) + ")")}</span></th>'


def _labels(fragment: str) -> list[str | None]:
    tree = lxml_html.fragment_fromstring(fragment, create_parent="div")
    return [m.get("aria-label") for m in tree.iter("math")]


def test_a_math_only_header_cell_names_its_formula_by_its_visible_tokens() -> None:
    cells = _cell(r"\gamma = 3") + _cell(r"\tau") + "<th>speedup</th>"
    out = render_math(f"<table><thead><tr>{cells}</tr></thead></table>")
    assert _labels(out) == ["γ = 3", "τ"]


def test_math_with_text_beside_it_or_outside_a_header_keeps_its_mathml_unnamed() -> None:
    out = render_math(_cell("c", before="cost ") + '<td><span class="arithmatex">\\(c\\)</span></td>'
                      + '<p><span class="arithmatex">\\(\\alpha\\)</span></p>')
    assert _labels(out) == [None, None, None]


def test_a_header_formula_of_two_spans_names_each() -> None:
    out = render_math('<th><span class="arithmatex">\\(a\\)</span> <span class="arithmatex">\\(b_2\\)</span></th>')
    assert _labels(out) == ["a", "b 2"]


def test_the_name_is_escaped_text_whatever_the_tex_holds() -> None:
    out = render_math(_cell(r'\text{"><img src=x onerror=alert(1)>}'))
    tree = lxml_html.fragment_fromstring(out, create_parent="div")
    assert not tree.xpath("//img") and not re.search(r"<img", out)
    (math,) = tree.iter("math")
    shown = " ".join(t.text.strip() for t in math.iter("mi", "mn", "mo", "mtext") if t.text and t.text.strip())
    assert shown and math.get("aria-label") == shown  # the attribute parses back to the text, quotes and all
