"""A real mkdocs build with the page worker against one without it, over the same repository: the same site,
page for page, once what each build draws at random (its release key, so its ciphertext) is named alike; and a
page the worker refuses fails the build with the page named, as it does without the worker."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from mkdocs.exceptions import Abort, PluginError

from qbank.build import mkdocs_build
from qbank.pagepool import pool

from ..paywall.conftest import make_repo

RANDOM = [
    (re.compile(r'(<meta name="qbank-release" content=")[0-9a-f]+(")'), r"\1RELEASE\2"),
    (re.compile(r'(data-qb-file=")[^"]+(")'), r"\1FILE\2"),
]


class Counted(pool.PagePool[Any, Any, Any]):
    started = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        Counted.started += 1
        super().__init__(*args, **kwargs)


def build(root: Path, out: Path, monkeypatch: pytest.MonkeyPatch, *, worker: bool) -> int:
    """Build ``root`` into ``out``, with the page worker or without; returns how many workers were started."""
    Counted.started = 0
    with monkeypatch.context() as patch:
        patch.setattr(pool, "MIN_PAGES", 1 if worker else 10**9)
        patch.setattr(pool, "PagePool", Counted)  # the hooks are loaded again by each build and import it then
        mkdocs_build(root, out)
    return Counted.started


def pages(site: Path) -> dict[str, str]:
    found = {}
    for path in sorted(site.rglob("*.html")):
        text = path.read_text("utf-8")
        for pattern, name in RANDOM:
            text = pattern.sub(name, text)
        found[path.relative_to(site).as_posix()] = text
    return found


def test_the_worker_builds_the_same_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_repo(tmp_path / "repo")
    assert build(root, tmp_path / "with", monkeypatch, worker=True) == 1
    assert build(root, tmp_path / "without", monkeypatch, worker=False) == 0
    with_worker, without = pages(tmp_path / "with"), pages(tmp_path / "without")
    assert with_worker.keys() == without.keys() and len(with_worker) > 10
    for name in with_worker:
        assert with_worker[name] == without[name], name
    sealed = [name for name, text in with_worker.items() if 'data-qb-file="FILE"' in text]
    assert sealed  # the comparison covered pages with premium sections
    files = {p.relative_to(tmp_path / "with").as_posix() for p in (tmp_path / "with").rglob("*") if p.is_file()}
    others = {p.relative_to(tmp_path / "without").as_posix() for p in (tmp_path / "without").rglob("*") if p.is_file()}
    assert len(files) == len(others)  # as many ciphertext files, under names of their own


def test_pages_the_worker_refuses_fail_the_build_each_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    root = make_repo(tmp_path / "repo")
    for name in ("alpha", "beta"):
        (root / "site_src" / f"{name}.md").write_text(f"# {name}\n\n<script>alert(1)</script>\n")
    for worker in (True, False):
        out = tmp_path / f"site-{worker}"
        caplog.clear()
        with pytest.raises((PluginError, Abort)):
            build(root, out, monkeypatch, worker=worker)
        text = caplog.text  # mkdocs logs the plugin's message and raises its own
        assert "alpha.md: page content may not contain <script> (CSP forbids it)" in text
        if worker:  # every refused page at once, not only the first
            assert "beta.md: page content may not contain <script> (CSP forbids it)" in text
