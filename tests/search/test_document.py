"""The page as Pagefind reads it, written from the page's content: when the theme adds nothing else to it."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import pytest

from qbank.search.document import early_indexing, indexed_document, indexed_early

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


@pytest.mark.parametrize("partial", ["content", "tags", "actions", "source-file", "feedback", "comments"])
def test_an_overridden_partial_of_the_content_turns_it_off(tmp_path: Path, partial: str) -> None:
    (tmp_path / "partials").mkdir()
    (tmp_path / "partials" / "header.html").write_text("<header></header>")  # outside the body: no matter
    theme = types.SimpleNamespace(custom_dir=str(tmp_path))
    assert early_indexing({"plugins": HOOKS, "extra": {}, "theme": theme}) is True
    (tmp_path / "partials" / f"{partial}.html").write_text("{{ page.content }} and more")
    assert early_indexing({"plugins": HOOKS, "extra": {}, "theme": theme}) is False
    assert early_indexing({"plugins": HOOKS, "extra": {}, "theme": {"custom_dir": str(tmp_path)}}) is False


@pytest.mark.parametrize(("meta", "early"), [
    ({}, True), ({"title": "t", "search": {"exclude": True}}, True),
    ({"template": "home.html"}, False), ({"revision_date": "2026-01-01"}, False),
    ({"git_revision_date_localized": "May 1"}, False), ({"git_creation_date_localized": "May 1"}, False),
])
def test_a_page_with_its_own_template_or_dates_is_indexed_as_written(meta: dict[str, Any], early: bool) -> None:
    assert indexed_early(meta) is early
