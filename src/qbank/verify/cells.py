"""Percent-format scripts: split a script into its ``# %%`` code cells and ``# %% [markdown]`` prose cells."""

from __future__ import annotations

import re
from dataclasses import dataclass

CELL_RE = re.compile(r"^# %%(?P<rest>.*)$")
MARKDOWN_RE = re.compile(r"\[(markdown|md)\]")


@dataclass(frozen=True)
class Cell:
    """One cell: its kind (code or markdown), source without the marker line, first line (1-based)."""

    kind: str
    source: str
    line: int


def _prose(lines: list[str]) -> str:
    """Markdown cell lines are comments; drop the ``# `` (or bare ``#``) prefix."""
    out = []
    for text in lines:
        if text.startswith("# "):
            out.append(text[2:])
        elif text.startswith("#"):
            out.append(text[1:])
        else:
            out.append(text)
    return "\n".join(out).strip("\n")


def split_cells(text: str) -> list[Cell]:
    """The script's cells in order; a script without markers is one code cell; empty cells are dropped."""
    lines = text.splitlines()
    cells: list[Cell] = []
    body: list[str] = []
    kind, start = "code", 1  # text before the first marker is a code cell starting at line 1

    def flush() -> None:  # reads kind, start, body of the enclosing loop
        src = _prose(body) if kind == "markdown" else "\n".join(body)
        if src.strip():
            cells.append(Cell(kind, src if kind == "markdown" else src.rstrip() + "\n", start))

    for number, text_line in enumerate(lines, 1):
        m = CELL_RE.match(text_line)
        if m:
            flush()
            kind = "markdown" if MARKDOWN_RE.search(m.group("rest")) else "code"
            start, body = number + 1, []
        else:
            body.append(text_line)
    flush()
    return cells


def padded(cell: Cell) -> str:
    """The cell's code preceded by blank lines, so compiled line numbers are the script's own."""
    return "\n" * (cell.line - 1) + cell.source
