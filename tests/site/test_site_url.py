"""The site's URL has one source: mkdocs.yml's ``site_url: !ENV [QBANK_SITE_URL, default]``.

A local build and the workflows (which set ``QBANK_SITE_URL`` from ``vars.SITE_URL``) read the same line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from qbank.build import build_site

from ..conftest import CASES, REPO, make_site_repo

pytestmark = [pytest.mark.slow]


def test_mkdocs_takes_the_site_url_from_the_environment() -> None:
    line = next(x for x in (REPO / "mkdocs.yml").read_text().splitlines() if x.startswith("site_url:"))
    assert line == 'site_url: !ENV [QBANK_SITE_URL, "https://qbank.example/"]'


def test_a_build_under_qbank_site_url_is_for_that_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_site_repo(tmp_path / "repo", CASES / "site")
    assert "!ENV [QBANK_SITE_URL" in (root / "mkdocs.yml").read_text()  # the fixture keeps the one source
    url = "http://127.0.0.1:48123/"
    monkeypatch.setenv("QBANK_SITE_URL", url)
    result = build_site(root)
    assert result.site_dir is not None, [p.text() for p in result.report.problems]
    site = result.site_dir
    page = (site / "questions/kv-fp8/index.html").read_text()
    assert re.search(rf'<link rel="canonical" href="{re.escape(url)}questions/kv-fp8/"', page), page[:2000]
    sitemap = (site / "sitemap.xml").read_text()
    assert f"<loc>{url}questions/kv-fp8/</loc>" in sitemap and "qbank.example" not in sitemap
    assert json.loads((site / "qbank-build.json").read_text())["site_url"] == url
