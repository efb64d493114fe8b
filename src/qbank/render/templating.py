"""Page markup from Jinja templates with autoescape: a value a template shows is HTML-escaped unless it is markup.

The page renderers assemble Markdown; the HTML inside it (list metadata, locked sections, the head's meta
tags, the sitemap) comes from the templates in ``templates/fragments``, so no renderer escapes by hand and
no field can open an element. Markdown links and text stay Markdown (``md_escape``), which is not HTML.
"""

from __future__ import annotations

from functools import cache

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape


@cache
def _env() -> Environment:
    return Environment(
        loader=PackageLoader("qbank.render", "templates/fragments"),
        autoescape=select_autoescape(enabled_extensions=("html", "xml", "j2"), default=True, default_for_string=True),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,  # package files: no stat of the template on each of a build's thousands of fragments
    )


def fragment(template: str, **context: object) -> str:
    """Render one fragment template (``templates/fragments/<template>``) with these values, escaped."""
    return _env().get_template(template).render(**context)
