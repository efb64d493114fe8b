"""A page's content work (sanitizing, MathML, sealing, its search document) done in a worker process while
mkdocs renders the next pages' Markdown in the build's own process; see ``docs/scale.md``."""
