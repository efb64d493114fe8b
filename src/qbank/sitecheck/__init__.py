"""Checks on a built site: structure and metadata of every page, reachability, and links over HTTP."""

from __future__ import annotations

from pathlib import Path

from ..problems import Problem
from .links import check_links
from .reach import check_reach
from .structure import check_structure, html_pages


def check_site(site_dir: Path, site_url: str, *, links: bool = True) -> list[Problem]:
    """Every check of the built site; ``links`` runs linkchecker over a local HTTP server."""
    pages = html_pages(site_dir)
    problems = check_structure(site_dir, site_url, pages) + check_reach(site_dir, pages)
    if links:
        problems += check_links(site_dir)
    return problems


__all__ = ["check_links", "check_reach", "check_site", "check_structure"]
