"""Results of pure per-file steps kept across checks in one process (`qbank serve` re-checks on every save).

Steps that are pure in a text keep their results by that text themselves (``claims.extract``, ``claims.held``,
``seal.premium_text``); this memo holds what is keyed by a file's path and stamp. ``docs/scale.md`` (The edit
loop) lists every result the serve loop keeps and what invalidates it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Memo:
    """Per-file results keyed by what they depend on; a stale key is simply never asked for again."""

    loaded: dict[tuple[str, int, int], Any] = field(default_factory=dict)
    """``load_model`` of a question's YAML file, and the items of a catalog file with their problems, keyed by the
    file's path, modification time (ns) and size."""
    values: dict[tuple[str, str], tuple[tuple[int, int, int], Any]] = field(default_factory=dict)
    """A script's declared values (``claims.values.values_for``), keyed by root and slug, with the stored entry's
    (mtime ns, size, inode) they were read at (``claims.kept``)."""
    bound: dict[str, tuple[str, Any, Any]] = field(default_factory=dict)
    """An answer's bindings by its path, with the text and values they were bound from (``claims.kept``)."""
    fields: dict[str, tuple[Any, Any, bool, Any, list[Any]]] = field(default_factory=dict)
    """A question's field bindings by its path: the parsed question and positions they came from, whether any
    field holds a number (values were asked for), those values, and the bindings (``claims.fields``)."""
