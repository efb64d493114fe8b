"""The page text helpers, each at its boundaries, with expectations worked out here rather than by the code."""

from __future__ import annotations

import pytest

from qbank.render.question import _section
from qbank.render.settings import Settings
from qbank.render.text import (
    DESCRIPTION_MAX,
    approx_words,
    attr,
    clip,
    counts,
    md_escape,
    plural,
    rel,
    strip_markers,
    url_of,
    words,
    yaml_str,
)


def test_strip_markers_removes_binding_and_exemption_markers_only() -> None:
    text = "It needs 40 GiB{=kv} of cache{!cited} per {request} and {=a\nb} stays."
    assert strip_markers(text) == "It needs 40 GiB of cache per {request} and {=a\nb} stays."


def test_plural() -> None:
    assert [plural(0, "question"), plural(1, "question"), plural(2, "question")] == [
        "0 questions",
        "1 question",
        "2 questions",
    ]
    assert plural(3, "company", "companies") == "3 companies"
    assert plural(1, "company", "companies") == "1 company"


def test_counts_line_carries_both_numbers() -> None:
    assert counts(12, 5) == (
        '<p class="qb-counts">12 questions · <span class="qb-unlock-count" '
        'data-qb-unlock-count="12" data-qb-free="5">5</span> unlocked for you</p>'
    )


@pytest.mark.parametrize(
    ("text", "n"),
    [
        ("", 0),
        ("one", 1),
        ("KV cache of 40 GiB, i.e. 42.9 GB.", 8),  # KV cache of 40 GiB i.e. 42.9 GB. (a word starts alphanumeric)
        ("## Heading — with a dash - and 2 words", 7),  # '##', '—' and '-' are no words
        ("it's the user’s don't", 4),  # apostrophes stay inside a word
        ("_under *star* `code`", 3),  # markup around a word leaves the word
    ],
)
def test_words_counts_tokens_that_start_alphanumeric(text: str, n: int) -> None:
    assert words(text) == n


@pytest.mark.parametrize(
    ("n", "shown"),
    [(0, 10), (1, 10), (9, 10), (14, 10), (16, 20), (44, 40), (47, 50), (123, 120), (127, 130), (1006, 1010)],
)
def test_approx_words_rounds_to_tens_never_below_ten(n: int, shown: int) -> None:
    assert approx_words("alpha " * n) == shown


def test_the_locked_placeholder_shows_the_rounded_count_not_the_exact_one() -> None:
    # 47 words of body plus the heading's one: 48, shown as about 50
    md = "## Rounding\n\n" + "alpha " * 47
    out = _section("Rounding", md, 1, "questions/x.md", Settings())
    assert "≈ 50 words" in out and "48" not in out and "47" not in out


def _oracle_clip(text: str, limit: int) -> str:
    """Whole words, in order, as many as fit with the ellipsis within ``limit`` characters."""
    out: list[str] = []
    for word in text.split():
        if len(" ".join([*out, word])) + 1 > limit:
            break
        out.append(word)
    return " ".join(out) + "…"


def test_clip_at_the_limit_and_one_past_it() -> None:
    exact = ("abcd " * 40)[: DESCRIPTION_MAX - 1] + "x"  # exactly 160 characters
    assert len(exact) == DESCRIPTION_MAX and clip(exact) == exact
    over = exact + "y"
    assert clip(over) != over and len(clip(over)) <= DESCRIPTION_MAX and clip(over).endswith("…")


@pytest.mark.parametrize("limit", range(8, 40))
@pytest.mark.parametrize("text", ["abcd efgh ijkl mnop qrst uvwx yzab cdef", "a bb ccc dddd eeeee ffffff ggggggg hh i"])
def test_clip_keeps_as_many_whole_words_as_fit(text: str, limit: int) -> None:
    want = text if len(text) <= limit else _oracle_clip(text, limit)
    assert clip(text, limit) == want
    assert len(clip(text, limit)) <= limit


def test_clip_collapses_whitespace_and_drops_dangling_punctuation() -> None:
    assert clip("  two\n\twords  ") == "two words"
    assert clip("alpha beta, gamma delta", 13) == "alpha beta…"  # not "alpha beta,…"
    assert clip("x" * 30, 10) == "x" * 9 + "…"  # one long word: cut hard, still within the limit


@pytest.mark.parametrize(
    ("path", "url"),
    [
        ("index.md", ""),
        ("questions/index.md", "questions/"),
        ("questions/kv.md", "questions/kv/"),
        ("a/b/index.md", "a/b/"),
        ("reindex.md", "reindex/"),
    ],
)
def test_url_of(path: str, url: str) -> None:
    assert url_of(path) == url


@pytest.mark.parametrize(
    ("src", "dst", "link"),
    [
        ("index.md", "questions/kv.md", "questions/kv.md"),
        ("questions/kv.md", "questions/fp8.md", "fp8.md"),
        ("questions/kv.md", "pricing.md", "../pricing.md"),
        ("a/b/c.md", "a/d/e.md", "../d/e.md"),
        ("a/b/c.md", "x/y.md", "../../x/y.md"),
        ("a/b.md", "a/b/c.md", "b/c.md"),
        ("a/b/c.md", "a/b.md", "../b.md"),
    ],
)
def test_rel_matches_posixpath(src: str, dst: str, link: str) -> None:
    import posixpath

    assert posixpath.relpath(dst, posixpath.dirname(src) or ".") == link  # the oracle agrees with the table
    assert rel(src, dst) == link


def test_escapes() -> None:
    assert attr('a "b" <c> & \'d\'') == "a &quot;b&quot; &lt;c&gt; &amp; &#x27;d&#x27;"
    assert yaml_str('KV "cache" — 40 GiB') == '"KV \\"cache\\" — 40 GiB"'
    assert md_escape(r"a_b*c`d[e]f<g>h\i") == r"a\_b\*c\`d\[e\]f\<g\>h\\i"


def test_a_description_is_at_most_160_characters_by_default() -> None:
    # the length search engines show: written out, not read from DESCRIPTION_MAX
    assert clip("x" * 160) == "x" * 160
    assert clip("x" * 161) == "x" * 159 + "…"
    assert clip("word " * 100) == " ".join(["word"] * 32) + "…"  # 32 words (159 characters) and the ellipsis
