"""Math typeset at build time: TeX becomes MathML, and the MathML holds nothing but MathML (attack first)."""

from __future__ import annotations

import lxml.html
import pytest

from qbank.mathml.render import TAGS, MathError, render_math, split_tex, to_mathml


def span(tex: str) -> str:
    return f'<span class="arithmatex">{tex}</span>'


@pytest.mark.parametrize(
    "tex",
    [
        r"\(\text{&lt;img src=x onerror=alert(1)&gt;}\)",
        r"\(\href{javascript:alert(1)}{x}\)",
        r"\(\text{&lt;/math&gt;&lt;script&gt;alert(1)&lt;/script&gt;}\)",
        r"\(\style{background:url(https://evil.example)}{x}\)",
        r"\(\text{&lt;a href=&quot;https://evil.example&quot;&gt;click&lt;/a&gt;}\)",
    ],
)
def test_tex_cannot_smuggle_markup_or_urls(tex: str) -> None:
    try:
        out = render_math(span(tex))
    except MathError:
        return  # refusing is fine too
    tree = lxml.html.fragment_fromstring(out, create_parent="div")
    for el in tree.iter():
        tag = el.tag.split("}")[-1] if isinstance(el.tag, str) else ""
        assert tag in TAGS | {"div", "span"}, (tag, out)
        for name, value in el.attrib.items():
            assert name in {"class", "display", "encoding", "stretchy", "mathvariant", "fence", "separator"}, name
            assert "javascript" not in value and "url(" not in value, (name, value)
    # the TeX survives only as annotation text, never as markup
    assert all(el.tag != "annotation" or len(el) == 0 for el in tree.iter())


def test_inline_and_display_math_become_mathml_with_the_tex_as_annotation() -> None:
    html = 'x <span class="arithmatex">\\(a &lt; b\\)</span> <div class="arithmatex">\\[\\frac{1}{2}\\]</div>'
    out = render_math(html)
    assert '<span class="arithmatex"><math display="inline">' in out
    assert '<div class="arithmatex"><math display="block">' in out and "<mfrac>" in out
    assert "<mo>&lt;</mo>" in out and '<annotation encoding="application/x-tex">a &lt; b</annotation>' in out
    assert "\\(" not in out and "\\[" not in out


def test_delimiters_and_errors() -> None:
    assert split_tex("\\(x\\)") == ("x", False)
    assert split_tex("\\[x\\]") == ("x", True)
    with pytest.raises(MathError):
        split_tex("no delimiters")
    assert "<msqrt>" in to_mathml("\\sqrt{2}", False)


def test_remembered_formulas_keep_their_display_and_failures() -> None:
    """``to_mathml`` remembers formulas: the same TeX inline and displayed stays two formulas, and a TeX that
    does not convert raises every time (a failure is never remembered as a result)."""
    inline, block = to_mathml("x^2", False), to_mathml("x^2", True)
    assert 'display="inline"' in inline and 'display="block"' in block
    assert to_mathml("x^2", False) == inline and to_mathml("x^2", True) == block
    for _ in range(2):
        with pytest.raises(MathError):
            to_mathml("\\frac", False)
