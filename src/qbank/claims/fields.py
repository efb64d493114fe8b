"""Numbers in a question's own fields are claims too: title, short title, description, teaser, premium summaries.

They are what a reader sees first (the h1, the search result, the list teaser, the locked section's line), so
each number binds to a value of the question's script exactly as the answer's numbers do. These fields are
shown as written on many pages, so they take no markers: a number that does not bind on its own is rephrased
(a count in words its script declares, ``a single`` for an article-like one, no quotation marks). Problems sit at
the field's value in the question's YAML: the line and column of the number when the value is one plain or
quoted line, else the field's first line.
"""

from __future__ import annotations

from ..corpus import Corpus
from ..memo import Memo
from ..model import PUBLIC_TEXT_FIELDS
from ..sources import Located
from .bind import AnswerClaims
from .embedded import ValuesFor, bind_embedded
from .extract import extract
from .match import Declared


def _origin(located: Located, loc: tuple[str | int, ...], lines: list[str]) -> tuple[int, int, bool]:
    """(line, col) where the value's text starts, and whether its columns map one to one (a one-line scalar)."""
    pos = located.value_pos(loc)
    head = lines[pos.line - 1] if 0 < pos.line <= len(lines) else ""
    rest = head[pos.col - 1 :] if pos.col > 0 else ""
    if rest[:1] in {"|", ">"}:  # a block scalar: its text starts on the next line, folded or not
        return pos.line + 1, 1, False
    quoted = rest[:1] in {'"', "'"}
    return pos.line, pos.col + (1 if quoted else 0), True


def check_field(
    slug: str, rel: str, key: str, text: str, values: list[Declared] | None, at: tuple[int, int, bool]
) -> AnswerClaims:
    """Bind one field's numbers against the question's values, placed in its YAML file."""
    line0, col0, mapped = at

    def place(line: int, col: int) -> tuple[int, int]:
        return (line0, col0 + col - 1) if mapped and line == 1 else (line0, col0)

    return bind_embedded(slug, rel, f"{rel}#{key}", text, values, place)


def check_fields(corpus: Corpus, values: ValuesFor, memo: Memo | None = None) -> list[AnswerClaims]:
    """Every question's free fields with numbers in them, bound to its script's values.

    With a ``memo``, a question whose parsed file is the one kept since the last check (``Memo.loaded`` hands
    back the same objects while the file's stamp is unchanged) and whose values are equal keeps its bindings
    without its file being read again.
    """
    out: list[AnswerClaims] = []
    for slug in sorted(corpus.questions):
        q = corpus.questions[slug]
        rel = corpus.question_path(slug)
        located = corpus.positions.get(rel)
        if located is None:
            continue
        kept = memo.fields.get(rel) if memo is not None else None
        if kept is not None and kept[0] is q and kept[1] is located:
            if not kept[2]:  # no field holds a number: nothing was bound, no values asked for
                out.extend(kept[4])
                continue
            found = values(corpus.root, slug)
            if kept[3] is found or kept[3] == found:
                out.extend(kept[4])
                continue
        path = corpus.root / rel
        if not path.is_file():
            continue
        lines = path.read_text(encoding="utf-8").split("\n")
        texts: list[tuple[str, tuple[str | int, ...], str]] = [(f, (f,), getattr(q, f)) for f in PUBLIC_TEXT_FIELDS]
        texts += [(f"premium_summaries.{i}", ("premium_summaries", i), s) for i, s in enumerate(q.premium_summaries)]
        found = None
        looked = False
        mine: list[AnswerClaims] = []
        for key, loc, text in texts:
            if not extract(text)[0]:
                continue
            if not looked:
                found, looked = values(corpus.root, slug), True
            if found is None:  # no record yet: its answer reports claims-unverified, once
                break
            mine.append(check_field(slug, rel, key, text, found, _origin(located, loc, lines)))
        if memo is not None:
            memo.fields[rel] = (q, located, looked, found, mine)
        out.extend(mine)
    return out
