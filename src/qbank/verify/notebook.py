"""The executed script as a notebook (nbformat), exported to Markdown by nbconvert: the derivation page."""

from __future__ import annotations

from functools import cache
from typing import Any


def to_notebook(cells: list[dict[str, Any]], slug: str) -> Any:
    """An nbformat v4 notebook of the executed cells with their captured outputs."""
    import nbformat.v4

    nbf: Any = nbformat.v4  # untyped library
    nb = nbf.new_notebook()
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata["qbank"] = {"slug": slug}
    for cell in cells:
        if cell["kind"] == "markdown":
            nb.cells.append(nbf.new_markdown_cell(cell["source"]))
            continue
        code = nbf.new_code_cell(cell["source"].rstrip("\n"), execution_count=cell.get("execution_count"))
        code.outputs = [nbf.new_output("stream", name=o["name"], text=o["text"]) for o in cell.get("outputs", [])]
        nb.cells.append(code)
    return nb


@cache
def _exporter() -> Any:
    """One exporter per process: building its template environment costs far more than an export."""
    import nbconvert

    exporter_cls: Any = nbconvert.MarkdownExporter
    return exporter_cls()


def export_markdown(nb: Any) -> str:
    """The notebook as Markdown (nbconvert's MarkdownExporter); call from one thread at a time."""
    body, _resources = _exporter().from_notebook_node(nb)
    return str(body)


def derivation(cells: list[dict[str, Any]], slug: str) -> str:
    """Markdown of one execution: prose cells, code cells and what each printed."""
    return export_markdown(to_notebook(cells, slug))
