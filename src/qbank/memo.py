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
