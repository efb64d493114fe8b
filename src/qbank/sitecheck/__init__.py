"""Checks on a built site: structure and metadata of every page, reachability, and links over HTTP."""

from __future__ import annotations

from pathlib import Path

from ..problems import Problem
from .links import check_links
from .reach import check_reach
from .structure import check_structure, html_pages
from .thin import check_thin


def check_site(
    site_dir: Path, site_url: str, *, links: bool = True, thin: tuple[int, float] | None = None
) -> list[Problem]:
    """Every check of the built site; ``links`` runs linkchecker over a local HTTP server; ``thin`` is
    (min own words, max overlap) for the own-text check of indexable pages (``extra.qbank`` in mkdocs.yml)."""
    pages = html_pages(site_dir)
    problems = check_structure(site_dir, site_url, pages) + check_reach(site_dir, pages)
    if thin is not None:
        problems += check_thin(pages, site_dir.name + "/", *thin)
    if links:
        problems += check_links(site_dir)
    return problems


__all__ = ["check_links", "check_reach", "check_site", "check_structure", "check_thin"]
