"""What the claims stage keeps between checks of one process (`qbank serve` re-checks on every save).

A save changes one file; binding every answer and every question field again against values read from a
thousand stored entries was most of the claims stage of a save at 1,000 questions. Here each script's values
are kept by its stored entry's stamp (modification time, size, inode: the store replaces an entry by renaming a
new file over it), an answer's bindings by its text and those values, and a question's field bindings by its
parsed file (the very objects ``Memo.loaded`` hands back while the file's stamp is unchanged) and those values.
A key that no longer matches is simply never asked for again; ``tests/claims/test_kept.py`` compares every kept
result with a fresh one.
"""

from __future__ import annotations

from pathlib import Path

from ..memo import Memo, file_stamp
from ..verify.store import ENTRIES
from . import values as values_module
from .bind import AnswerClaims
from .embedded import ValuesFor
from .match import Declared


def values_by_stamp(memo: Memo) -> ValuesFor:
    """``values_for``, kept per script while its stored entry's stamp is unchanged (the same list object then)."""

    def values(root: Path, slug: str) -> list[Declared] | None:
        base = str(root)
        stamp = file_stamp(f"{base}/{ENTRIES}/{slug}.json")
        key = (base, slug)
        kept = memo.values.get(key)
        if stamp is not None and kept is not None and kept[0] == stamp:
            return kept[1]
        found = values_module.values_for(root, slug)
        if stamp is None:
            memo.values.pop(key, None)
        else:
            memo.values[key] = (stamp, found)
        return found

    return values


def kept_binding(memo: Memo, path: str, text: str, values: list[Declared] | None) -> AnswerClaims | None:
    """The bindings of ``path`` from an earlier check, when its text and values are the same as now."""
    kept = memo.bound.get(path)
    if kept is None or kept[0] != text or not (kept[1] is values or kept[1] == values):
        return None
    return kept[2]


def keep_binding(memo: Memo, path: str, text: str, values: list[Declared] | None, result: AnswerClaims) -> None:
    """Remember an answer's bindings under its text and values."""
    memo.bound[path] = (text, values, result)
