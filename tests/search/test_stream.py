"""Pagefind fed page by page: the same index as Pagefind's own command over the written site (compared by what
it maps: words, filters and pages, whatever numbers the pages got), stable across builds, and every failure of
the service a message, never a hang."""

from __future__ import annotations

import random
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from qbank.render.search import build_search_index
from qbank.search.stream import OUTPUT, SearchStream

from .pagefind_files import meaning

KINDS = ["Question", "Topic", "Page", "Company", "Question", "Concept", "Question"]


def write_site(site: Path, n: int = 7) -> list[Path]:
    """Pages as the theme writes them: a body to index, a filter, a heading's permalink to leave out."""
    pages = []
    for i in range(n):
        page = site / f"p{i}" / "index.html"
        page.parent.mkdir(parents=True)
        page.write_text(
            f'<html lang="en"><head><title>Page {i}</title></head><body><div data-pagefind-body '
            f'data-pagefind-filter="type:{KINDS[i % len(KINDS)]}"><h1 id="t">Page {i} '
            f'<a class="headerlink" href="#t">permalinkword</a></h1><p>kv cache paging number {i} '
            f'{"prefill decode " * i}</p><math><mi>x</mi><annotation encoding="application/x-tex">\\texonlyword '
            f'{i}</annotation></math></div></body></html>')
        pages.append(page)
    (site / "404.html").write_text('<html lang="en"><body><h1>Page not found</h1></body></html>')
    return pages


def streamed(site: Path, order: list[Path], stream: SearchStream | None = None) -> str | None:
    stream = stream or SearchStream()
    for page in order:
        stream.add(page.relative_to(site).as_posix(), page.read_text())
    return stream.finish(site)


def test_the_index_means_what_pagefinds_command_writes(tmp_path: Path) -> None:
    pages = write_site(tmp_path / "a")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    assert build_search_index(tmp_path / "a") is None
    order = [tmp_path / "b" / p.relative_to(tmp_path / "a") for p in pages]
    random.Random(3).shuffle(order)
    assert streamed(tmp_path / "b", order[1:]) is None  # one page, and the 404 page, left to finish's walk
    want, got = meaning(tmp_path / "a" / OUTPUT), meaning(tmp_path / "b" / OUTPUT)
    assert got == want
    assert len(got["pages"]) == 7 and "prefil" in got["words"]  # stemmed
    assert "permalinkword" not in got["words"] and "texonlyword" not in got["words"]  # left out: not read
    assert "x" in got["words"]  # the formula as shown
    assert got["filters"]["type"].keys() == set(KINDS)
    rest = {p.relative_to(tmp_path / "a").as_posix() for p in (tmp_path / "a" / OUTPUT).rglob("*")} - {
        p.relative_to(tmp_path / "b").as_posix() for p in (tmp_path / "b" / OUTPUT).rglob("*")}
    assert all("/index/" in r or "/filter/" in r or r.endswith("pf_meta") for r in rest)  # the same files else


def test_the_same_pages_in_the_same_order_give_the_same_bytes(tmp_path: Path) -> None:
    pages = write_site(tmp_path / "a")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    assert streamed(tmp_path / "a", pages) is None
    slow = SearchStream()
    slow.add("p0/index.html", pages[0].read_text())
    slow._pump(b"", lambda: not slow.pending)  # the first page indexed before the next is sent
    assert streamed(tmp_path / "b", [tmp_path / "b" / p.relative_to(tmp_path / "a") for p in pages], slow) is None
    files = {p.relative_to(tmp_path / "a" / OUTPUT): p.read_bytes() for p in (tmp_path / "a" / OUTPUT).rglob("*")
             if p.is_file()}
    assert files == {p.relative_to(tmp_path / "b" / OUTPUT): p.read_bytes()
                     for p in (tmp_path / "b" / OUTPUT).rglob("*") if p.is_file()}


def test_the_index_is_asked_for_once_and_no_page_may_follow(tmp_path: Path) -> None:
    pages = write_site(tmp_path / "a", 3)
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    early = SearchStream()
    early.request_index(tmp_path / "a")  # every page from disk, then the index asked for
    early.request_index(tmp_path / "a")
    assert early.finish(tmp_path / "a") is None
    assert streamed(tmp_path / "b", [tmp_path / "b" / p.relative_to(tmp_path / "a") for p in pages]) is None
    assert meaning(tmp_path / "a" / OUTPUT) == meaning(tmp_path / "b" / OUTPUT)
    late = SearchStream()
    late.request_index(tmp_path / "a")
    late.add("late/index.html", pages[0].read_text())
    assert late.finish(tmp_path / "a") == "late/index.html was written after the search index was asked for"


def test_a_page_larger_than_the_pipes_goes_through(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (page,) = write_site(site, 1)
    big = page.read_text().replace("kv cache", "kv cache " + "decode tokens " * 400_000)  # 5.6 MB
    page.write_text(big)
    stream = SearchStream()
    stream.add("p0/index.html", big)
    stream.add("p0/index.html", "sent twice: ignored")
    assert stream.finish(site) is None
    assert "token" in meaning(site / OUTPUT)["words"]  # stemmed
    assert stream.proc is None  # stopped


def service(tmp_path: Path, body: str) -> list[str]:
    """A stand-in for ``pagefind --service`` that runs ``body`` (Python)."""
    script = tmp_path / "svc.py"
    script.write_text("import sys, time, base64, json\n" + body)
    return [sys.executable, str(script)]


ANSWER = ("def answer(i, payload):\n"
          "    sys.stdout.buffer.write(base64.b64encode(json.dumps({'message_id': i, 'payload': payload})"
          ".encode()) + b','); sys.stdout.flush()\n")


@pytest.mark.parametrize(("body", "timeout", "message"), [
    ("sys.exit(0)", 30, "pagefind stopped"),
    ("sys.stderr.write('it broke'); sys.stderr.flush(); sys.exit(3)", 30, "pagefind stopped: it broke"),
    ("time.sleep(60)", 1, "pagefind did not answer in 1 s"),
    ("sys.stdout.write('hello,'); sys.stdout.flush(); time.sleep(60)", 30, "not a Pagefind answer: b'hello'"),
    (ANSWER + "answer(1, {'type': 'Error', 'message': 'no index'}); time.sleep(60)", 30,
     "pagefind refused NewIndex: no index"),
])
def test_a_service_that_fails_is_a_message(tmp_path: Path, body: str, timeout: float, message: str) -> None:
    site = tmp_path / "site"
    write_site(site, 2)
    stream = SearchStream(service(tmp_path, body), timeout=timeout)
    stream.add("p0/index.html", "<p>x</p>")
    assert stream.finish(site) == message
    assert stream.proc is None and not (site / OUTPUT).exists()


def test_pages_it_refuses_are_named(tmp_path: Path) -> None:
    site = tmp_path / "site"
    write_site(site, 4)
    body = ANSWER + (
        "buf = b''\n"
        "while True:\n"
        "    while b',' not in buf:\n"
        "        chunk = sys.stdin.buffer.read1(65536)\n"
        "        if not chunk: sys.exit(0)\n"
        "        buf += chunk\n"
        "    raw, _, buf = buf.partition(b',')\n"
        "    msg = json.loads(base64.b64decode(raw)); p = msg['payload']\n"
        "    if p['type'] == 'NewIndex': answer(msg['message_id'], {'type': 'NewIndex', 'index_id': 4})\n"
        "    elif p['type'] == 'AddFile' and p['index_id'] != 4: sys.exit(9)\n"
        "    elif p['type'] == 'AddFile': answer(msg['message_id'], {'type': 'Error', 'message': 'bad '"
        " + p['file_path']} if p['file_path'] != 'p1/index.html' else {'type': 'IndexedFile'})\n"
        "    else: answer(msg['message_id'], {'type': 'WriteFiles'})\n")
    stream = SearchStream(service(tmp_path, body))
    assert stream.finish(site) == ("pagefind could not index: 404.html: bad 404.html; p0/index.html: bad "
                                   "p0/index.html; p2/index.html: bad p2/index.html (and 1 more)")


def test_a_missing_binary_is_a_message(tmp_path: Path) -> None:
    stream = SearchStream([str(tmp_path / "no-such-pagefind")])
    stream.add("a.html", "<p>x</p>")
    assert stream.finish(tmp_path).startswith("pagefind did not run: [Errno 2]")


ECHO = ANSWER + (
    "buf = b''\n"
    "while True:\n"
    "    chunk = sys.stdin.buffer.read1(65536)\n"
    "    if not chunk: sys.exit(0)\n"
    "    buf += chunk\n"
    "    while b',' in buf:\n"
    "        raw, _, buf = buf.partition(b',')\n"
    "        msg = json.loads(base64.b64decode(raw)); kind = msg['payload']['type']\n"
    "        answer(msg['message_id'], {'type': kind, 'index_id': 0, **(FILES if kind == 'GetFiles' else {})})\n")


@pytest.mark.parametrize(("files", "message"), [
    ({}, "pagefind sent no index files"),
    ({"files": []}, "pagefind wrote no index into pagefind/"),
    ({"files": [{"path": "../escaped.js", "content": "eA=="}]},
     "pagefind sent an index file this build will not write: '../escaped.js'"),
    ({"files": [{"path": "/tmp/abs.js", "content": "eA=="}]},
     "pagefind sent an index file this build will not write: '/tmp/abs.js'"),
    ({"files": [{"path": "", "content": "eA=="}]}, "pagefind sent an index file this build will not write: ''"),
    ({"files": [{"path": "index/../../x.js", "content": "eA=="}]},
     "pagefind sent an index file this build will not write: 'index/../../x.js'"),
    ({"files": [{"path": "index\\..\\..\\x.js", "content": "eA=="}]},
     "pagefind sent an index file this build will not write: 'index\\\\..\\\\..\\\\x.js'"),
    ({"files": [{"path": "pagefind.js"}]}, "pagefind sent an index file this build will not write: 'pagefind.js'"),
    ({"files": ["pagefind.js"]}, "pagefind sent an index file this build will not write: 'None'"),
    ({"files": [{"path": "pagefind.js", "content": "not base64!"}]},
     "pagefind sent pagefind.js in a form this build cannot read"),
])
def test_index_files_the_build_will_not_write_are_a_message(tmp_path: Path, files: dict[str, Any],
                                                            message: str) -> None:
    site = tmp_path / "site"
    write_site(site, 1)
    assert SearchStream(service(tmp_path, f"FILES = {files!r}\n" + ECHO)).finish(site) == message
    assert not (tmp_path / "escaped.js").exists() and not (site / OUTPUT / "pagefind.js").exists()


def test_the_files_handed_back_are_written_whole(tmp_path: Path) -> None:
    site = tmp_path / "site"
    write_site(site, 1)
    files = {"files": [{"path": "pagefind.js", "content": "Y29uc29sZQ=="},
                       {"path": "fragment/en_1.pf_fragment", "content": "AAEC"}]}
    assert SearchStream(service(tmp_path, f"FILES = {files!r}\n" + ECHO)).finish(site) is None
    assert (site / OUTPUT / "pagefind.js").read_bytes() == b"console"
    assert (site / OUTPUT / "fragment" / "en_1.pf_fragment").read_bytes() == bytes([0, 1, 2])


def test_a_process_forked_meanwhile_does_not_keep_the_service_waiting(tmp_path: Path) -> None:
    import multiprocessing
    import time

    pages = write_site(tmp_path / "site", 3)
    stream = SearchStream(timeout=5)
    child = multiprocessing.get_context("fork").Process(target=time.sleep, args=(60,))
    child.start()  # as a card worker is forked: with copies of the service's pipes, held to the end
    try:
        assert streamed(tmp_path / "site", pages, stream) is None
        assert child.is_alive()
        assert (tmp_path / "site" / OUTPUT / "pagefind-ui.js").read_bytes().endswith(b"\n")  # written whole
    finally:
        child.kill()
        child.join()


def test_the_service_runs_below_the_build() -> None:
    import os

    from qbank.priority import NICE

    stream = SearchStream()
    try:
        assert stream.proc is not None and stream.failure is None
        assert os.getpriority(os.PRIO_PROCESS, stream.proc.pid) == min(os.getpriority(os.PRIO_PROCESS, 0) + NICE, 19)
    finally:
        stream.cancel()
