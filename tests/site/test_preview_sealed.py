"""A normal build (no preview flag) seals every premium section and carries no preview markup."""

from __future__ import annotations

from pathlib import Path


def test_build_without_the_flag_seals_and_has_no_preview_markup(site: Path) -> None:
    pages = {p: p.read_text() for p in site.rglob("*.html")}
    assert pages
    for path, html in pages.items():
        assert "qb-preview" not in html, path
        assert "preview: premium shown" not in html, path
        assert "SECRET-PREMIUM" not in html, path  # the fixture's premium sections all carry this marker
    for slug in ("kv-block-waste", "kv-fp8", "spec-eagle-rl"):
        html = pages[site / "questions" / slug / "index.html"]
        assert "qb-locked" in html, slug
        assert 'http-equiv="Content-Security-Policy"' in html, slug
