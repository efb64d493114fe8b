"""Answers: Markdown split into free text and premium sections by explicit, checked markers.

Syntax (a line each, outside code fences)::

    Free part of the answer ...

    /// premium
    ## Heading of the premium section
    ... premium Markdown ...
    ///

A block opens with ``/// premium`` and closes with a line holding only ``///``. Blocks do not nest;
an opener without its closer, a closer without an opener, an unknown ``/// word`` and a block whose
first line is not a ``##`` heading are all errors, so a premium section can never leak by accident.
The syntax is that of pymdownx "blocks": unprocessed, it shows as literal text, never hidden.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .problems import Problem, error

OPEN_RE = re.compile(r"^///\s*(?P<word>\S+)?\s*(?P<rest>.*?)\s*$")
FENCE_RE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})")
HEADING_RE = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<text>.+?)\s*#*\s*$")
TABLE_RULE_RE = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)+\|?\s*$|^\s*\|\s*:?-+:?\s*\|\s*$")


@dataclass(frozen=True)
class PremiumSection:
    """One premium block: its heading, its Markdown body and where it sits in the file."""

    heading: str
    markdown: str
    line: int
    end_line: int


@dataclass(frozen=True)
class FreeText:
    """A run of free Markdown between premium blocks."""

    markdown: str
    line: int


Part = FreeText | PremiumSection


@dataclass(frozen=True)
class Answer:
    """A parsed answer: its parts in order."""

    slug: str
    path: str
    text: str
    parts: tuple[Part, ...]

    @property
    def premium(self) -> tuple[PremiumSection, ...]:
        """The premium sections in order."""
        return tuple(p for p in self.parts if isinstance(p, PremiumSection))

    @property
    def free_markdown(self) -> str:
        """All free text joined; never contains premium text."""
        return "\n".join(p.markdown for p in self.parts if isinstance(p, FreeText)).strip() + "\n"


def code_fence_lines(lines: list[str]) -> list[bool]:
    """For each line, whether it lies inside (or is a delimiter of) a fenced code block."""
    inside: list[bool] = []
    fence: str | None = None
    for line in lines:
        m = FENCE_RE.match(line)
        if fence is None:
            if m:
                fence = m.group("fence")
                inside.append(True)
                continue
            inside.append(False)
        else:
            inside.append(True)
            if (
                m
                and m.group("fence")[0] == fence[0]
                and len(m.group("fence")) >= len(fence)
                and not line.strip()[len(m.group("fence")) :].strip()
            ):
                fence = None
    return inside


def empty_header_cells(lines: list[str], in_code: list[bool], rel: str) -> list[Problem]:
    """A table whose header row has an empty cell: the column has no name, which a screen reader announces with
    each of its cells (axe-core's empty-table-header)."""
    problems: list[Problem] = []
    for i in range(len(lines) - 1):
        if in_code[i] or in_code[i + 1] or "|" not in lines[i] or not TABLE_RULE_RE.match(lines[i + 1]):
            continue
        row = lines[i]
        start = len(row) - len(row.lstrip())
        body = row.strip()
        if body.startswith("|"):
            body, start = body[1:], start + 1
        if body.endswith("|") and not body.endswith("\\|"):
            body = body[:-1]
        col = start
        for cell in re.split(r"(?<!\\)\|", body):  # an escaped '\|' is text inside a cell
            if not cell.strip():
                problems.append(error(rel, i + 1, col + 1, "table-header-empty",
                                      "this table header cell is empty: name the column (a screen reader announces "
                                      "the name with each of its cells)"))
            col += len(cell) + 1
    return problems


def parse_answer(text: str, slug: str, rel: str) -> tuple[Answer | None, list[Problem]]:
    """Split an answer into free and premium parts, reporting every marker problem with its position."""
    problems: list[Problem] = []
    if not text.strip():
        return None, [error(rel, 1, 1, "answer-empty", "the answer is empty")]
    lines = text.split("\n")
    in_code = code_fence_lines(lines)
    problems += empty_header_cells(lines, in_code, rel)
    parts: list[Part] = []
    buf: list[str] = []
    buf_start = 1
    open_line: int | None = None
    bad_block = False  # an unknown '/// word' block: reported once, its closer belongs to it
    for i, line in enumerate(lines, start=1):
        if in_code[i - 1]:
            buf.append(line)
            continue
        if open_line is None:
            h = HEADING_RE.match(line)
            if h and len(h.group("hashes")) == 1:
                problems.append(
                    error(
                        rel,
                        i,
                        1,
                        "answer-h1",
                        "the page title comes from the question; start sections at '##'",
                    )
                )
        m = OPEN_RE.match(line) if line.startswith("///") else None
        if m is None:
            buf.append(line)
            continue
        word = m.group("word")
        if word is None:
            if open_line is None:
                problems.append(error(rel, i, 1, "premium-stray-close", "'///' closes no premium block"))
                continue
            if bad_block:
                buf, buf_start, open_line, bad_block = [], i + 1, None, False
                continue
            body = buf
            first = next((ln for ln in body if ln.strip()), None)
            head = HEADING_RE.match(first) if first is not None else None
            if first is None:
                problems.append(error(rel, open_line, 1, "premium-empty", "the premium block is empty"))
            elif head is None or len(head.group("hashes")) < 2:
                problems.append(
                    error(
                        rel,
                        open_line + 1 + body.index(first),
                        1,
                        "premium-no-heading",
                        "a premium block must start with a '##' heading (it is shown on the locked placeholder)",
                    )
                )
            else:
                parts.append(PremiumSection(head.group("text"), "\n".join(body).strip() + "\n", open_line, i))
            buf, buf_start, open_line = [], i + 1, None
            continue
        if open_line is not None:
            problems.append(
                error(
                    rel,
                    i,
                    1,
                    "premium-nested",
                    f"premium block opened inside the one opened at line {open_line}",
                )
            )
            continue
        if word != "premium":
            problems.append(
                error(
                    rel,
                    i,
                    5,
                    "premium-marker-unknown",
                    f"unknown block '/// {word}'; the only block is '/// premium'",
                )
            )
            bad_block = True
        elif m.group("rest"):
            problems.append(
                error(
                    rel,
                    i,
                    13,
                    "premium-marker-unknown",
                    "'/// premium' takes nothing after it; put the title in a '##' heading",
                )
            )
        if "".join(buf).strip():
            parts.append(FreeText("\n".join(buf).strip() + "\n", buf_start))
        buf, open_line = [], i
    if open_line is not None:
        problems.append(
            error(
                rel,
                open_line,
                1,
                "premium-unclosed",
                "premium block is never closed; end it with a line '///'",
            )
        )
    elif "".join(buf).strip():
        parts.append(FreeText("\n".join(buf).strip() + "\n", buf_start))
    if problems:
        return None, problems
    if not any(isinstance(p, FreeText) for p in parts):
        return None, [error(rel, 1, 1, "answer-no-free", "an answer needs a free part before its premium sections")]
    return Answer(slug, rel, text, tuple(parts)), []
