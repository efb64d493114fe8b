"""A page's content work as one function (``qbank.pagepool.content``): what it seals, what it refuses (as data,
naming the page), and the search document it writes, each checked against text the test writes itself."""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qbank.pagepool.content import PageDone, PageWork, page_content
from qbank.paywall import site
from qbank.paywall.recipient import ENV_RECIPIENT

TOKEN = "00112233445566778899aabbccddeeff"
SECRET = "the premium answer text"


def region(kind: str, index: int, inner: str, heading: str = "") -> str:
    hexed = heading.encode().hex() or "-"
    return f"<!--qbseal {TOKEN} open {kind} {index} {hexed}-->{inner}<!--qbseal {TOKEN} close {kind} {index}-->"


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    monkeypatch.delenv(ENV_RECIPIENT, raising=False)
    (tmp_path / "mkdocs.yml").write_text("site_name: t\n")
    cfg = {"config_file_path": str(tmp_path / "mkdocs.yml"), "site_dir": str(tmp_path / "site"),
           "site_name": "Site", "docs_dir": str(tmp_path / "docs"), "site_url": "https://example.org/",
           "extra": {"paywall": {"enabled": True}}}
    site.on_config(cfg)
    yield cfg
    site.take(tmp_path / "site")


def work(html: str, document: bool = False, title: str = "A question") -> PageWork:
    return PageWork("questions/a.md", "questions/a/", html, title, "Question", document)


def test_a_premium_part_is_sealed_and_nothing_of_the_build_changes(config: dict[str, Any]) -> None:
    inner = f"<h3 id='own'>Locked</h3><h4 id='in'>Inner</h4><p>{SECRET}</p>"
    html = "<p>free</p>" + region("premium", 0, inner, "Locked")
    done = page_content(work(html), config, TOKEN)
    assert done.error is None and done.sealed is not None and done.document is None
    assert SECRET not in done.sealed.html and "<p>free</p>" in done.sealed.html
    assert [f.path for f in done.sealed.files] and all(SECRET.encode() not in f.content for f in done.sealed.files)
    assert [(f.page_path, f.heading) for f in done.sealed.fragments] == [("/questions/a/", "Locked")]
    assert SECRET in done.sealed.fragments[0].text and done.sealed.hidden_ids == {"in"}
    build = site.current(config)
    assert build.files == [] and build.fragments == []  # the caller takes them (take_sealed), in page order
    assert pickle.loads(pickle.dumps(done)) == done  # it crosses from the worker as it is


def test_math_outside_the_parts_is_typeset_and_bad_math_is_refused_naming_the_page(config: dict[str, Any]) -> None:
    done = page_content(work('<p><span class="arithmatex">\\(x^2\\)</span></p>'), config, TOKEN)
    assert done.sealed is not None and "<math" in done.sealed.html and "<msup>" in done.sealed.html
    bad = page_content(work('<p><span class="arithmatex">\\(\\frac\\)</span></p>'), config, TOKEN)
    assert bad.sealed is None and bad.document is None
    assert bad.error is not None and bad.error.startswith("questions/a.md: ")


def test_a_script_in_content_is_refused_naming_the_page(config: dict[str, Any]) -> None:
    done = page_content(work("<p>x</p><script>alert(1)</script>"), config, TOKEN)
    assert done == PageDone(None, None, "questions/a.md: page content may not contain <script> (CSP forbids it)")


def test_premium_parts_with_the_paywall_off_are_refused(config: dict[str, Any]) -> None:
    site.current(config).enabled = False
    done = page_content(work(region("premium", 0, "<p>x</p>")), config, TOKEN)
    assert done.error == "questions/a.md: premium sections on a page while the paywall is disabled"


def test_the_search_document_is_written_only_when_asked_and_holds_the_sealed_content(config: dict[str, Any]) -> None:
    html = "<p>free words</p>" + region("premium", 0, f"<p>{SECRET}</p>", "Locked")
    done = page_content(work(html, document=True, title="Why <KV>"), config, TOKEN)
    assert done.sealed is not None and done.document is not None
    assert done.document.startswith('<html lang="en"><head></head><body><div data-pagefind-body '
                                    'data-pagefind-meta="type:Question" data-pagefind-filter="type:Question">'
                                    "<h1>Why <KV></h1>")
    assert done.sealed.html in done.document and SECRET not in done.document
    assert page_content(work(html, document=False), config, TOKEN).document is None


def test_what_crosses_between_the_processes_cannot_be_changed_on_the_way(config: dict[str, Any]) -> None:
    work_item = work("<p>x</p>")
    done = page_content(work_item, config, TOKEN)
    with pytest.raises(dataclasses.FrozenInstanceError):
        work_item.html = "<p>unsealed</p>"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        done.error = None  # type: ignore[misc]
