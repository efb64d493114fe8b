"""The page text helpers, each at its boundaries, with expectations worked out here rather than by the code."""

from __future__ import annotations

import pytest

from qbank.model import DESCRIPTION_MAX, DESCRIPTION_MIN
from qbank.render.question import _section
from qbank.render.settings import Settings
from qbank.render.text import (
    approx_words,
    attr,
    counts,
    fit,
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


def test_fit_takes_the_first_candidate_within_bounds_whole() -> None:
    exact = "a" * DESCRIPTION_MAX  # exactly at the limit: taken
    assert fit((exact, "short"), DESCRIPTION_MAX) == exact
    over = exact + "b"  # one past the limit: skipped for the next candidate, never cut
    assert fit((over, "next one"), DESCRIPTION_MAX) == "next one"
    # the lower bound is inclusive too, and one below it is skipped
    assert fit(("x" * 69, "y" * 70, "z" * 71), DESCRIPTION_MAX, 70) == "y" * 70


def test_fit_returns_the_last_candidate_whole_when_none_fits() -> None:
    # nothing is ever cut mid-word: the built-site check reports the length instead
    assert fit(("a" * 200, "b b " * 60), DESCRIPTION_MAX) == " ".join(("b b " * 60).split())


def test_fit_passes_over_a_candidate_that_is_empty_or_only_whitespace_by_default() -> None:
    assert fit(("", " \n\t ", "b"), DESCRIPTION_MAX) == "b"
    assert fit(("x", "b"), DESCRIPTION_MAX) == "x"  # one character is not empty: the bound is 1, inclusive
    assert fit(("", "  "), DESCRIPTION_MAX) == ""  # none fits: the last, for the built-site check to report


def test_fit_collapses_whitespace() -> None:
    assert fit(("  two\n\twords  ",), DESCRIPTION_MAX) == "two words"


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


def test_the_description_limits_are_what_search_engines_show() -> None:
    # written out here, not read from the code under test: about 160 characters shown, 70 the useful least
    assert (DESCRIPTION_MIN, DESCRIPTION_MAX) == (70, 160)
