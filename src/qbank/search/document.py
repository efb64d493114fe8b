"""The part of a page Pagefind reads, known as soon as the page's content is: so the page can be indexed during
mkdocs' first pass, and the index built while the second pass renders the templates.

Pagefind reads only the element marked ``data-pagefind-body`` (the theme override, ``main.html``, wraps the
content block in it, with the page's kind as a meta and a filter). Inside it, mkdocs-material's content partial
writes the page's tags, its edit and view buttons, an ``<h1>`` of the title when the content has none, the
content, the source file's dates, the feedback form and comments. With no plugin and no repository configured
(``plugins: []``, no ``repo_url``, no analytics) only the ``<h1>`` and the content are there, which is what
:func:`indexed_document` writes; :func:`early_indexing` says when that holds for a site and a page. Anything
else is indexed from the page as written, at the end of the second pass. ``tests/site/test_build.py`` checks
that the index built this way means what Pagefind's own command writes over the finished site.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from types import ModuleType
from typing import Any

PARTIALS = ("content", "tags", "actions", "source-file", "feedback", "comments")
"""mkdocs-material's content partial and those it includes: a theme override of any of them may add text."""
DATED = ("revision_date", "git_revision_date_localized", "git_creation_date_localized")
"""Front matter keys the source-file partial shows as dates inside the content."""


def early_indexing(config: Any) -> bool:
    """Whether this site's content partial adds nothing but the title (see the module's note): no plugin (hooks
    files count among mkdocs' plugins as modules), no repository, no analytics, no tags, and none of the
    partials involved overridden in the theme's own folder."""
    extra = config.get("extra") or {}
    plugins = (config.get("plugins") or {}).values()
    theme = config.get("theme")
    custom = getattr(theme, "custom_dir", None) or (theme.get("custom_dir") if isinstance(theme, dict) else None)
    folder = Path(str(custom)) / "partials" if custom else None
    overridden = folder is not None and any((folder / f"{name}.html").exists() for name in PARTIALS)
    return not (any(not isinstance(p, ModuleType) for p in plugins) or config.get("repo_url")
                or config.get("edit_uri") or extra.get("analytics") or extra.get("tags") or overridden)


def indexed_early(meta: dict[str, Any]) -> bool:
    """Whether a page (by its front matter) is written with nothing else in its body: the theme's own template
    and no date for the source-file partial to show. A page excluded from search has no body at all."""
    return not meta.get("template") and not any(meta.get(key) for key in DATED)


def indexed_document(content: str, title: str, site_name: str, kind: str | None) -> str:
    """The page as Pagefind will read it: the body the theme writes around ``content``."""
    heading = "" if "<h1" in content else f"<h1>{title or site_name}</h1>"
    attrs = f' data-pagefind-meta="type:{escape(kind)}" data-pagefind-filter="type:{escape(kind)}"' if kind else ""
    return f'<html lang="en"><head></head><body><div data-pagefind-body{attrs}>{heading}{content}</div></body></html>'
