"""The nesting check's quick walk agrees with ``HTMLParser``, which is the reference, on every page it answers."""

from __future__ import annotations

import random

import pytest

from qbank.seal.nesting import Nesting, nesting, parsed, plainly_nested

TYPICAL = (
    '<h2 id="sizing-it">Sizing it<a class="headerlink" href="#sizing-it" title="Permanent link">&para;</a></h2>\n'
    "<p>The cache holds <code>2 L H d b</code> bytes &gt; what fits; see <a href='/concepts/kv/'>KV</a>.</p>\n"
    '<div class="arithmatex"><math display="block"><semantics><mrow><mi>L</mi><mo>=</mo><mn>80</mn></mrow>'
    '<annotation encoding="application/x-tex">L = 80</annotation></semantics></math></div>\n'
    '<div class="highlight"><pre><span></span><code><span class="k">def</span> <span class="nf">f</span>'
    "(x):\n    <span class=\"k\">return</span> x &lt; 2\n</code></pre></div>\n"
    "<table>\n<thead>\n<tr>\n<th>batch</th>\n<th>tokens/s</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>8</td>\n"
    "<td>1,200</td>\n</tr>\n</tbody>\n</table>\n<p>A break<br>and an image <img alt=\"x\" src=\"a.png\"/>, "
    '<input type="checkbox" disabled checked> and <span data-x=plain>a plain value</span>.</p>\n<hr />\n'
)


def test_a_typical_page_takes_the_quick_walk() -> None:
    """Markdown's output (headings, code, MathML, tables, void elements, plain attribute values) nests, and the
    quick walk says so without ``HTMLParser``; the speed-up would vanish silently otherwise."""
    assert plainly_nested(TYPICAL)
    assert parsed(TYPICAL) == Nesting([], [])


def test_what_the_quick_walk_leaves_to_the_parser() -> None:
    for page in [
        "<div><p>x</p>",  # left open
        "<p>x</p></div>",  # stray
        "<div><!-- c --></div>",  # a comment
        "<div><script>if (a < b) {}</script></div>",  # raw text
        '<div title="a<b">x</div>',  # `<` inside an attribute
        "<div>a < b</div>",  # a bare `<`
        "<a href=x/>y</a>",  # a plain value ending in `/`: HTMLParser reads `x/`, not a self-closing tag
        "<![CDATA[x]]>",
    ]:
        assert not plainly_nested(page), page
        assert nesting(page) == parsed(page)


def test_stray_positions_come_from_the_parser() -> None:
    page = "<div>\n<p>a</p></span>\n</div></div >"
    # a stray's span is its name's length from its start, whatever spaces it holds (``balanced`` then refuses
    # a span that is not a whole closing tag)
    assert nesting(page) == Nesting([(14, 21), (28, 34)], [])
    assert page[14:21] == "</span>"


NAMES = ["div", "p", "span", "DIV", "a", "br", "img", "hr", "math", "mi", "x-y", "svg:g", "script", "style"]
ATTRS = ['', ' class="a b"', " id='q'", " data-x=plain", ' title="1 > 0"', " checked", ' alt="a<b"', " href=x/",
         ' a = "b"', " a=b/c"]
TEXT = ["", "text", " > ", "&lt;", "a < b", "\n", "&amp;", "<!-- c -->", "<!doctype html>", "</>", "<?pi?>"]


def soup(rng: random.Random) -> str:
    out = []
    for _ in range(rng.randrange(1, 14)):
        name = rng.choice(NAMES)
        kind = rng.random()
        if kind < 0.45:
            out.append(f"<{name}{rng.choice(ATTRS)}{rng.choice(['', '/', ' /'])}>")
        elif kind < 0.85:
            out.append(f"</{name}{rng.choice(['', ' ', chr(10)])}>")
        out.append(rng.choice(TEXT))
    return "".join(out)


def balanced_soup(rng: random.Random, depth: int = 0) -> str:
    """Nested markup that mostly nests, so the quick walk's "nests" answer is exercised often."""
    out = []
    for _ in range(rng.randrange(0, 4)):
        name = rng.choice(NAMES[:11])
        attrs = rng.choice(ATTRS)
        if name.lower() in {"br", "img", "hr"}:
            out.append(f"<{name}{attrs}>")
        elif depth < 4:
            out.append(f"<{name}{attrs}>{rng.choice(TEXT[:7])}{balanced_soup(rng, depth + 1)}</{name}>")
    return "".join(out)


def test_random_markup_reads_as_htmlparser_reads_it() -> None:
    """4,000 pages of tag soup and of mostly nested markup: the answer is always ``HTMLParser``'s, and the quick
    walk never says "nests" where ``HTMLParser`` finds a stray or open element."""
    rng = random.Random(20261206)
    quick = 0
    for i in range(4000):
        page = soup(rng) if i % 2 else balanced_soup(rng)
        reference = parsed(page)
        assert nesting(page) == reference, page
        if plainly_nested(page):
            quick += 1
            assert reference == Nesting([], []), page
    assert quick > 500  # the generator does reach the quick walk's "nests"


def test_a_closing_tag_of_another_element_is_stray_in_either_order() -> None:
    """Whichever name sorts first, ``</b>`` does not close ``<a>``: the quick walk never says it nests, and the
    answer names the stray and the element left open (explicit, not read from the parser under test)."""
    for outer, inner in [("div", "span"), ("span", "div"), ("p", "li"), ("li", "p"), ("td", "th"), ("th", "td")]:
        page = f"<{outer}>x</{inner}>"
        assert not plainly_nested(page), page
        start = len(f"<{outer}>x")
        assert nesting(page) == Nesting([(start, start + len(f"</{inner}>"))], [outer]), page
        assert parsed(page) == nesting(page)


def test_a_stray_on_the_first_line_is_placed_from_offset_zero() -> None:
    assert nesting("</span><p>a</p>") == Nesting([(0, 7)], [])
    assert nesting("<p>a</p></em>\n<br>") == Nesting([(8, 13)], [])


def test_closing_tags_of_void_elements_are_ignored_by_both_walks() -> None:
    """``</br>`` closes nothing and opens nothing: the quick walk goes on past it (and answers), like HTMLParser."""
    page = "<p>a</br>b<img src=x></img></p>"
    assert plainly_nested(page)
    assert parsed(page) == Nesting([], [])


def test_a_long_page_takes_the_quick_walk() -> None:
    """Hundreds of tags (a long answer): counted, not identified (a count past CPython's small ints)."""
    page = "<div>" + "<p>para <em>one</em> and <code>two</code></p>\n" * 200 + "</div>"
    assert page.count("<") > 1000 and plainly_nested(page)


def test_the_answer_is_a_value() -> None:
    import dataclasses

    with pytest.raises(dataclasses.FrozenInstanceError):
        nesting("<p></p>").open = ["p"]  # type: ignore[misc]
