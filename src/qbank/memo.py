"""Results of pure per-file steps kept across checks in one process (`qbank serve` re-checks on every save).

Steps that are pure in a text keep their results by that text themselves (``claims.extract``, ``claims.held``,
``seal.premium_text``); this memo holds what is keyed by a file's path and stamp. ``docs/scale.md`` (The edit
loop) lists every result the serve loop keeps and what invalidates it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from .answers import Answer
    from .claims.bind import AnswerClaims
    from .claims.match import Declared
    from .model import Question
    from .problems import Problem
    from .sources import Located

Stamp = tuple[int, int, int]
V = TypeVar("V")


def file_stamp(path: str) -> Stamp | None:
    """(mtime ns, size, inode) of a file, None when it is missing: what a kept result of that file is keyed by
    (an editor that saves by renaming a new file over the old one changes the inode even within one clock tick)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


def kept_by_stamp(kept: dict[str, tuple[Stamp, V]], key: str, path: str, make: Callable[[], V]) -> V:
    """``make()`` for the file at ``path``, kept in ``kept`` under ``key`` while the file's stamp is unchanged
    (one entry a key, replaced when the stamp changes); a file that cannot be stat'ed is made afresh, not kept."""
    stamp = file_stamp(path)
    if stamp is None:
        return make()
    entry = kept.get(key)
    if entry is None or entry[0] != stamp:
        entry = kept[key] = (stamp, make())
    return entry[1]


@dataclass
class Memo:
    """Per-file results keyed by what they depend on; a stale key is simply never asked for again."""

    loaded: dict[str, tuple[Stamp, Any]] = field(default_factory=dict)
    """``load_model`` of a question's YAML file, and the items of a catalog file with their problems, by the
    file's path, with the (mtime ns, size, inode) it was read at: one entry a file, however often it is saved."""
    answers: dict[str, tuple[Stamp, tuple[Answer | None, list[Problem]]]] = field(default_factory=dict)
    """An answer read and split into parts (``corpus.parse_answer``) with its problems, by path, with the file's
    (mtime ns, size, inode) it was read at."""
    values: dict[tuple[str, str], tuple[Stamp, list[Declared] | None]] = field(default_factory=dict)
    """A script's declared values (``claims.values.values_for``), keyed by root and slug, with the stored entry's
    (mtime ns, size, inode) they were read at (``claims.kept``)."""
    bound: dict[str, tuple[str, list[Declared] | None, AnswerClaims]] = field(default_factory=dict)
    """An answer's bindings by its path, with the text and values they were bound from (``claims.kept``)."""
    fields: dict[str, tuple[Question, Located, bool, list[Declared] | None, list[AnswerClaims]]] = field(
        default_factory=dict
    )
    """A question's field bindings by its path: the parsed question and positions they came from, whether any
    field holds a number (values were asked for), those values, and the bindings (``claims.fields``)."""
