"""Extraction: Markdown -> runs of prose and math with exact source positions -> quantities and markers.

markdown-it-py's block tokens (with line maps) say which lines are prose, headings, list items, table
rows, admonitions and math blocks, and which are code. Within a block, a small inline pass removes what
holds no claims (code spans, URLs, link targets, HTML, claim markers) while keeping, for every character
that remains, its source line and column; math is normalised (``\\times`` -> ``×``, ``\\text{GiB}`` ->
``GiB``) the same way.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt
from mdit_py_plugins.admon import admon_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin

from .chartext import CharText, Piece, Pos, normalize_math
from .grammar import scan
from .lexicon import COUNT_DIMENSIONS, UNIT_RE, UNIT_WORDS
from .quantity import Found

MARKER_RE = re.compile(r"\{(?P<kind>[=!])(?P<body>[^{}\n]*)\}")
"""The marker syntax; renderers strip ``\\{[=!][^{}\\n]*\\}``."""


@dataclass(frozen=True)
class Marker:
    """An explicit binding ``{=name}`` or exemption ``{!reason}`` written right after a quantity."""

    kind: str
    body: str
    line: int
    col: int


@dataclass(frozen=True)
class Quantity:
    """One quantity found in an answer, positioned at its number's first character."""

    found: Found
    text: str
    line: int
    col: int
    context: str
    marker: Marker | None = None
    core_end: Pos = (0, 0)
    """Line and column just past the first number as written (what a mutation rewrites)."""
    hi_core: tuple[Pos, Pos] | None = None
    """For a range, where its second number starts and ends (line, column; end exclusive)."""
    end: Pos = (0, 0)
    """Line and column just past the whole quantity (where a marker goes)."""


# inline spans that hold no claims (replaced by spaces)
CODE_SPAN_RE = re.compile(r"(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)
URL_RE = re.compile(r"<(?:https?|ftp|mailto):[^>\s]*>|\bhttps?://[^\s)>\]]+|\bwww\.[^\s)>\]]+")
LINK_TARGET_RE = re.compile(r"(?<=\])\((?:[^()\s]|\([^()]*\))*(?:\s+\"[^\"]*\")?\)|(?<=\])\[[^\]]*\]")
REF_DEF_RE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*\S.*$", re.MULTILINE)
HTML_RE = re.compile(r"<!--.*?-->|</?[A-Za-z][^<>]*>|&#?\w+;", re.DOTALL)
ATTR_LIST_RE = re.compile(r"\{:[^{}]*\}|\{\s*[.#][^{}]*\}")
INLINE_MATH_RE = re.compile(r"(?<![\\$])\$(?![\s$])(?P<body>(?:[^$\\\n]|\\.)+?)(?<!\s)\$(?!\d)")
ORDERED_MARKER_RE = re.compile(r"\A(?P<lead>[ \t>]*)(?P<num>\d{1,9}[.)])(?=\s|$)")
BLOCKQUOTE_RE = re.compile(r"(?m)^[ \t]*>[ \t>]*")
HEADING_NUMBER_RE = re.compile(r"^(?P<lead>\s*#{1,6}\s+)(?P<num>\d+(?:\.\d+)*\.?)(?=\s)")
# math that ends in a number of its own ("= 327{,}680", "2^{20}"), not in an expression ("t+1")
NUMERIC_TAIL_RE = re.compile(r"(?:^|=|\\approx|\\times|\\cdot)\s*[\d{},.^\s\\]*\d[\d{},.^\s]*\}?\s*$")
PIPE_SPLIT_RE = re.compile(r"(?<!\\)\|")
HEADER_UNIT_RE = re.compile(r"[(\[]\s*(?P<unit>[^()\[\]]+?)\s*[)\]]\s*$|\s(?P<bare>%|GiB|GB|MiB|MB|TB|ms|us|µs|s)\s*$")


def _chartext(lines: list[str], first: int, last: int, start_col: int = 0, end_col: int | None = None) -> CharText:
    """Characters of ``lines[first:last]`` (0-based lines), optionally a column slice of a single line."""
    chars: list[str] = []
    pos: list[Pos] = []
    for i in range(first, last):
        line = lines[i]
        lo, hi = (start_col, len(line) if end_col is None else end_col) if last - first == 1 else (0, len(line))
        for c in range(lo, hi):
            chars.append(line[c])
            pos.append((i + 1, c + 1))
        if i < last - 1:
            chars.append("\n")
            pos.append((i + 1, len(line) + 1))
    return CharText(chars, pos)


SENTINEL = 0xE000  # claim markers become one private-use character each, so substitutions carry them along


def _pull_markers(ct: CharText, table: dict[str, Marker]) -> None:
    """Replace each claim marker by a sentinel character that stands for it in ``table``."""

    def repl(m: re.Match[str]) -> list[Piece]:
        key = chr(SENTINEL + len(table))
        line, col = ct.pos[m.start()]
        table[key] = Marker(m.group("kind"), m.group("body").strip(), line, col)
        return [key]

    ct.sub(MARKER_RE, repl)


def _is_sentinel(c: str) -> bool:
    return SENTINEL <= ord(c) < SENTINEL + 0x1000


def _take_markers(ct: CharText, table: dict[str, Marker]) -> list[tuple[int, Marker]]:
    """Remove the sentinels; return each marker with the index in the remaining text where it sat."""
    out: list[tuple[int, Marker]] = []
    chars: list[str] = []
    pos: list[Pos] = []
    for c, p in zip(ct.chars, ct.pos, strict=True):
        if _is_sentinel(c):
            out.append((len(chars), table[c]))
        else:
            chars.append(c)
            pos.append(p)
    ct.chars, ct.pos = chars, pos
    return out


def _split_math(ct: CharText) -> list[CharText]:
    """Cut inline ``$...$`` math out of a prose run into runs of its own.

    A marker right after the closing '$' goes along, and so does a unit that follows math ending in a
    number (``$... = 327{,}680$ bytes``).
    """
    text = ct.text
    out: list[CharText] = []
    spans = list(INLINE_MATH_RE.finditer(text))
    for m in spans:
        s, e = m.span("body")
        end = m.end()
        sub = CharText(ct.chars[s:e], ct.pos[s:e])
        unit = UNIT_RE.match(text, end)
        if unit and NUMERIC_TAIL_RE.search(text[s:e]):
            sub.chars += [" ", *text[unit.start("unit") : unit.end()]]
            sub.pos += [ct.pos[unit.start("unit")], *ct.pos[unit.start("unit") : unit.end()]]
            end = unit.end()
        if end < len(text) and _is_sentinel(text[end]):
            sub.chars.append(text[end])
            sub.pos.append(ct.pos[end])
            end += 1
        out.append(sub)
        ct.chars[m.start() : end] = [" "] * (end - m.start())
    return out


def _clean_prose(ct: CharText) -> None:
    ct.blank(CODE_SPAN_RE)
    ct.blank(REF_DEF_RE)
    ct.blank(URL_RE)
    ct.blank(LINK_TARGET_RE)
    ct.blank(HTML_RE)
    ct.blank(ATTR_LIST_RE)
    ct.blank(r"\{\?[^{}\n]*\}")  # the tested-claim marker {?why} (held.py): its words are not numbers


@dataclass(frozen=True)
class Run:
    """A piece of text to scan: prose or math, with its context and a unit plain numbers take."""

    ct: CharText
    context: str
    math: bool = False
    unit_hint: str | None = None


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table").use(dollarmath_plugin, double_inline=True).use(admon_plugin)


# a label word that is a number: the unit after it belongs to a quantity ("400 Gb/s NIC")
NUMBER_WORD_RE = re.compile(r"[\d.,]+[KMGT]?")


def header_unit(cell: str, *, measure_only: bool = False) -> str | None:
    """The unit a table label states: 'KV (GiB)', 'share [%]', 'latency ms', 'GB/s', 'KV-only GPUs'."""
    m = HEADER_UNIT_RE.search(cell.strip())
    if m:
        unit = (m.group("unit") or m.group("bare") or "").strip()
        if unit in UNIT_WORDS or unit in {"x", "×"}:
            return "x" if unit == "×" else unit
    # a short label naming one unit: "GB/s", "KV-only GPUs", "Bytes read (BF16)"; never a ratio label
    # ("Weights / GPU", "FLOP per byte"), and a count only as the label's last word ("KV-only GPUs")
    words = re.sub(r"\([^()]*\)|\[[^\[\]]*\]", " ", cell).split()
    if len(words) > 3 or any(w.lower() in {"/", "per"} for w in words):
        return None
    # a unit right after a number belongs to a quantity the label states, not to the cells it labels
    found = [
        (i, u)
        for i, w in enumerate(words)
        if (u := _unit_word(w)) and not (i and NUMBER_WORD_RE.fullmatch(words[i - 1]))
    ]
    if len(found) != 1:
        return None
    i, unit = found[0]
    is_count = UNIT_WORDS[unit][0] in COUNT_DIMENSIONS
    return None if is_count and (measure_only or i != len(words) - 1) else unit


def _unit_word(word: str) -> str | None:
    """A unit spelled by one table-label word ("GiB", "GPUs", "Bytes", "FLOPs"), or None."""
    w = word.strip(".,:;*_")
    if w in UNIT_WORDS and len(w) > 1:
        return w
    lower = {k.lower(): k for k in UNIT_WORDS if len(k) >= 3}
    return lower.get(w.lower()) if len(w) >= 3 else None


def _table_runs(lines: list[str], first: int, last: int) -> list[Run]:
    """One run per table cell; plain numbers take the unit their column header (or row label) names."""
    runs: list[Run] = []
    units: list[str | None] | None = None
    for i in range(first, last):
        line = lines[i]
        if re.fullmatch(r"\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*", line):
            continue
        bounds = [-1, *[m.start() for m in PIPE_SPLIT_RE.finditer(line)], len(line)]
        cells = [(a + 1, b) for a, b in itertools.pairwise(bounds)]
        if line.lstrip().startswith("|"):
            cells = cells[1:]
        if line.rstrip().endswith("|") and len(cells) > 1:
            cells = cells[:-1]
        header = units is None
        if units is None:
            units = [header_unit(line[a:b]) for a, b in cells]
        # a row label names a unit of measure for its row ("Bytes read (BF16)"), never a count ("step 0")
        row_unit = header_unit(line[cells[0][0] : cells[0][1]], measure_only=True) if cells else None
        for k, (a, b) in enumerate(cells):
            hint = None
            if not header:
                hint = units[k] if k < len(units) and units[k] else (row_unit if k > 0 else None)
            runs.append(Run(_chartext(lines, i, i + 1, a, b), "table-header" if header else "table", unit_hint=hint))
    return runs


def runs_of(text: str, markers: dict[str, Marker]) -> list[Run]:
    """Every prose and math run of a Markdown document, in source order; markers become sentinels."""
    lines = text.split("\n")
    tokens = _parser().parse(text)
    runs: list[Run] = []
    done: set[int] = set()
    ordered_items: set[int] = set()
    context = "paragraph"
    stack: list[str] = []
    for tok in tokens:
        if tok.type == "list_item_open" and tok.markup in {".", ")"} and tok.map:
            ordered_items.add(tok.map[0])
        if tok.type.endswith("_open"):
            stack.append(tok.type[: -len("_open")])
        elif tok.type.endswith("_close") and stack:
            stack.pop()
        if tok.map is None:
            continue
        first, last = tok.map
        if tok.type in {"fence", "code_block", "html_block", "front_matter"}:
            done.update(range(first, last))
        elif tok.type == "math_block":
            ct = _chartext(lines, first, last)
            ct.blank(r"\$\$")
            _pull_markers(ct, markers)
            normalize_math(ct)
            runs.append(Run(ct, "math", math=True))
            done.update(range(first, last))
        elif tok.type == "table_open":
            for run in _table_runs(lines, first, last):
                _pull_markers(run.ct, markers)
                _clean_prose(run.ct)
                for math_ct in _split_math(run.ct):
                    normalize_math(math_ct)
                    runs.append(Run(math_ct, "math", math=True))
                runs.append(run)
            done.update(range(first, last))
        elif tok.type == "inline":
            todo = [i for i in range(first, last) if i not in done]
            if not todo:
                continue
            context = next(
                (
                    s
                    for s in reversed(stack)
                    if s in {"heading", "blockquote", "admonition_title", "list_item", "admonition"}
                ),
                "paragraph",
            )
            ct = _chartext(lines, todo[0], todo[-1] + 1)
            done.update(todo)
            if any(todo[0] <= idx <= todo[-1] for idx in ordered_items):
                ct.sub(ORDERED_MARKER_RE, lambda m: [m.group("lead"), " " * len(m.group("num"))])
            ct.blank(BLOCKQUOTE_RE)
            if context == "heading":
                ct.sub(HEADING_NUMBER_RE, lambda m: [m.group("lead"), " " * len(m.group("num"))])
            ct.blank(r"^\s*!!!\s*\w+")
            _pull_markers(ct, markers)
            _clean_prose(ct)
            for math_ct in _split_math(ct):
                normalize_math(math_ct)
                runs.append(Run(math_ct, "math", math=True))
            runs.append(Run(ct, context))
    return runs


def _attach(found: list[Found], text: str, markers: list[tuple[int, Marker]]) -> tuple[dict[int, Marker], list[Marker]]:
    """Markers to quantities: right after the quantity, or after the one noun it counts ('five engineers{!}')."""
    attached: dict[int, Marker] = {}
    orphans: list[Marker] = []
    for idx, marker in markers:
        target = None
        for k, f in enumerate(found):
            inside = f.num_start < idx <= f.end  # "8{=gpus} GPUs", "57%{=x} or more"
            after = f.end <= idx and re.fullmatch(r"(?:[\s-]?[A-Za-z][\w-]*){0,3}\s*", text[f.end : idx])
            if inside or after:
                target = k
        if target is None or target in attached:
            orphans.append(marker)
        else:
            attached[target] = marker
    return attached, orphans


def extract(text: str) -> tuple[list[Quantity], list[Marker]]:
    """Quantities of a Markdown document in source order, and markers that follow no quantity.

    Pure in ``text``, so results are kept by text (``_extracted``): `qbank serve` re-checks every answer, concept
    explanation and question field on each save, and only the changed texts are extracted again.
    """
    quantities, orphans = _extracted(text)
    return list(quantities), list(orphans)


@lru_cache(maxsize=1 << 16)
def _extracted(text: str) -> tuple[tuple[Quantity, ...], tuple[Marker, ...]]:
    """:func:`extract` of a text not seen lately (its results are frozen dataclasses, shared safely)."""
    quantities: list[Quantity] = []
    orphans: list[Marker] = []
    table: dict[str, Marker] = {}
    for run in runs_of(text, table):
        ct = run.ct
        placed = _take_markers(ct, table)
        found = scan(ct.text, math_mode=run.math, unit_hint=run.unit_hint)
        attached, lost = _attach(found, ct.text, placed)
        orphans += lost
        for k, f in enumerate(found):
            line, col = ct.pos[f.num_start]
            span = ct.text[f.num_start : f.end]
            end_line, end_col = ct.pos[max(f.num_end, f.num_start + 1) - 1]
            hi_core = None
            if f.hi_span is not None:
                (hl, hc), (el, ec) = ct.pos[f.hi_span[0]], ct.pos[f.hi_span[1] - 1]
                hi_core = ((hl, hc), (el, ec + 1))
            last_line, last_col = ct.pos[f.end - 1]
            quantity = Quantity(
                f,
                span,
                line,
                col,
                run.context,
                attached.get(k),
                (end_line, end_col + 1),
                hi_core,
                (last_line, last_col + 1),
            )
            quantities.append(quantity)
    quantities.sort(key=lambda q: (q.line, q.col))
    return tuple(quantities), tuple(orphans)


def strip_markers(markdown: str) -> str:
    """The Markdown readers see: claim markers removed, except inside fenced code and code spans."""
    from ..answers import code_fence_lines

    lines = markdown.split("\n")
    fenced = code_fence_lines(lines)
    out = []
    for line, in_code in zip(lines, fenced, strict=True):
        if in_code or "{" not in line:
            out.append(line)
            continue
        pieces, last = [], 0
        for m in CODE_SPAN_RE.finditer(line):
            pieces.append(MARKER_RE.sub("", line[last : m.start()]))
            pieces.append(m.group(0))
            last = m.end()
        pieces.append(MARKER_RE.sub("", line[last:]))
        out.append("".join(pieces))
    return "\n".join(out)
