"""Metadata and breadcrumbs for the hand-written pages in ``site_src/`` (about, ...)."""

from __future__ import annotations

from .common import HOME
from .seo import PageMeta, crumbs_markdown

SOURCE_DIR = "site_src"


def handwritten_meta(path: str, title: str, description: str | None, indexable: bool = True) -> PageMeta:
    """A hand-written page's metadata from its own title and front-matter description (``noindex: true`` in the
    front matter keeps a utility page such as search out of search engines and the sitemap)."""
    crumbs = (("Home", HOME),) if path == HOME else (("Home", HOME), (title, path))
    return PageMeta(
        path=path,
        title=title,
        description=" ".join((description or "").split()),
        crumbs=crumbs,
        kind="page",
        indexable=indexable,
        sources=(f"{SOURCE_DIR}/{path}",),
    )


def with_crumbs(markdown: str, meta: PageMeta) -> str:
    """Prepend the visible breadcrumbs to a hand-written page's Markdown."""
    return crumbs_markdown(meta.path, meta.crumbs) + "\n" + markdown
