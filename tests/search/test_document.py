"""The page as Pagefind reads it, written from the page's content: when the theme adds nothing else to it."""

from __future__ import annotations

import types
from typing import Any

import pytest

from qbank.search.document import early_indexing, indexed_document

HOOKS = {"hooks/qbank_hooks.py": types.ModuleType("qbank_hooks")}


def test_the_body_wraps_the_content_with_the_kind_as_meta_and_filter() -> None:
    doc = indexed_document("<h1 id='t'>T</h1><p>x</p>", "Title", "Site", "Question")
    assert doc == ('<html lang="en"><head></head><body><div data-pagefind-body data-pagefind-meta="type:Question" '
                   "data-pagefind-filter=\"type:Question\"><h1 id='t'>T</h1><p>x</p></div></body></html>")


def test_a_content_without_a_heading_gets_the_title_as_the_theme_writes_it() -> None:
    assert indexed_document("<p>x</p>", "A & B", "Site", None) == (
        '<html lang="en"><head></head><body><div data-pagefind-body><h1>A & B</h1><p>x</p></div></body></html>')
    assert "<h1>Site</h1>" in indexed_document("<p>x</p>", "", "Site", None)  # no title: the site's name
    assert 'type:a&quot;b"' in indexed_document("<h1>x</h1>", "t", "s", 'a"b')


@pytest.mark.parametrize(("config", "early"), [
    ({"plugins": HOOKS, "extra": {}}, True),
    ({"plugins": {}, "extra": None}, True),
    ({"plugins": {**HOOKS, "search": object()}, "extra": {}}, False),  # a plugin may add to the content
    ({"plugins": HOOKS, "repo_url": "https://example.org/r", "extra": {}}, False),  # edit and view buttons
    ({"plugins": HOOKS, "edit_uri": "edit/main/", "extra": {}}, False),
    ({"plugins": HOOKS, "extra": {"analytics": {"feedback": {}}}}, False),  # the feedback form
    ({"plugins": HOOKS, "extra": {"tags": {"a": "b"}}}, False),
])
def test_early_indexing_only_where_the_content_partial_adds_nothing(config: dict[str, Any], early: bool) -> None:
    assert early_indexing(config) is early
