"""Numbers in concept explanations are claims too: each binds to its concept's worked example's values.

A concept page explains one idea with a worked number (``questions/_catalog/concepts.yaml``: ``explanation``
and ``worked_example``, the question whose verification script computes that number). Its numbers are
extracted and bound exactly like an answer's, against that question's record, and positioned in the
catalog file: the explanation is a literal block (``explanation: |``), so its line ``k`` is the file's line
after the ``|`` plus ``k``, indented by the block's indentation.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..corpus import CATALOG, Corpus
from ..problems import error
from .bind import AnswerClaims
from .embedded import ValuesFor, bind_embedded
from .match import Declared

CONCEPTS_REL = f"{CATALOG}/concepts.yaml"

@dataclass(frozen=True)
class Explanation:
    """One concept's explanation and where its first line sits in the catalog file."""

    slug: str
    worked_example: str
    text: str
    line0: int
    """The file line just before the explanation's first line (the ``explanation: |`` line)."""
    indent: int
    """Columns of block indentation before each line's text."""
    key_line: int
    key_col: int


def block_origin(lines: list[str], value_line: int) -> tuple[int, int]:
    """(line0, indent) of a literal block scalar whose indicator ``|`` is on ``value_line`` (1-based).

    A folded or plain scalar has no line-for-line mapping: its numbers are placed at the key (indent -1).
    """
    head = lines[value_line - 1].rstrip() if 0 < value_line <= len(lines) else ""
    if not head.split(":", 1)[-1].strip().startswith("|"):
        return value_line, -1
    for line in lines[value_line:]:
        if line.strip():
            return value_line, len(line) - len(line.lstrip(" "))
    return value_line, 0


def explanations(corpus: Corpus) -> list[Explanation]:
    """Every concept with an explanation and a worked example, in catalog order, positioned."""
    located = corpus.positions.get(CONCEPTS_REL)
    raw = located.data.get("concepts") if located is not None and isinstance(located.data, dict) else None
    if located is None or not isinstance(raw, list):
        return []
    lines = (corpus.root / CONCEPTS_REL).read_text(encoding="utf-8").split("\n")
    out: list[Explanation] = []
    for i, item in enumerate(raw):
        slug = item.get("slug") if isinstance(item, dict) else None
        if not isinstance(slug, str):
            continue
        concept = corpus.concepts.get(slug)
        if concept is None or not concept.explanation.strip() or concept.worked_example is None:
            continue
        pos = located.value_pos(("concepts", i, "explanation"))
        key = located.key_pos(("concepts", i, "explanation"))
        line0, indent = block_origin(lines, pos.line)
        out.append(Explanation(slug, concept.worked_example, concept.explanation, line0, indent, key.line, key.col))
    return out


def _placed(e: Explanation, line: int, col: int) -> tuple[int, int]:
    return (e.key_line, e.key_col) if e.indent < 0 else (e.line0 + line, e.indent + col)


def check_explanation(e: Explanation, values: list[Declared] | None) -> AnswerClaims:
    """Bind one explanation against its worked example's values, positioned in the catalog file.

    The worked example's claims that the explanation does not state are not reported (its answer states
    them); an explanation that binds no number at all is a problem: the page promises a worked number.
    """
    # locked per concept, so an edit to one explanation never renumbers another's occurrences
    result = bind_embedded(
        e.worked_example, CONCEPTS_REL, f"{CONCEPTS_REL}#{e.slug}", e.text, values,
        lambda line, col: _placed(e, line, col), script_path=f"verify/{e.worked_example}.py",
    )
    if values is not None and result.summary()["bound"] == 0:
        result.problems.append(
            error(
                CONCEPTS_REL,
                e.key_line,
                e.key_col,
                "concept-no-worked-number",
                f"concept {e.slug!r}: the explanation binds no number to {e.worked_example}'s values; work one "
                "number through with a value its script declares (`{=name}`)",
            )
        )
    return result


def check_concepts(corpus: Corpus, values: ValuesFor) -> list[AnswerClaims]:
    """Every concept explanation's bindings, in catalog order."""
    return [check_explanation(e, values(corpus.root, e.worked_example)) for e in explanations(corpus)]
