"""Results of pure per-file steps kept across checks in one process (`qbank serve` re-checks on every save)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Memo:
    """Per-file results keyed by what they depend on; a stale key is simply never asked for again."""

    loaded: dict[tuple[str, int, int], Any] = field(default_factory=dict)
    """``load_model`` of a YAML file, keyed by its path, modification time (ns) and size."""
    extracted: dict[str, Any] = field(default_factory=dict)
    """The quantities and orphan markers extracted from an answer's text, keyed by the text."""
