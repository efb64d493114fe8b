"""Numbers in text that lives inside another file (a concept's explanation, a question's field), bound as claims.

The text is extracted and bound like an answer; ``place`` maps each (line, col) of the text to its position in the
file that holds it, so problems and lock entries point there. The script's claims the text does not state are not
reported unused (the question's answer states them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from .bind import AnswerClaims, bind_answer
from .extract import extract
from .held import held_numbers
from .match import Declared

ValuesFor = Callable[[Path, str], list[Declared] | None]
"""The values a question's script declares, by repository root and slug (None: no verification record)."""

Place = Callable[[int, int], tuple[int, int]]


def bind_embedded(
    slug: str,
    path: str,
    lock_path: str,
    text: str,
    values: list[Declared] | None,
    place: Place,
    script_path: str | None = None,
) -> AnswerClaims:
    """Bind ``text``'s numbers against ``values`` (of ``slug``'s script), positioned by ``place`` in ``path``."""
    quantities, orphans = extract(text)
    held = {place(*k): why for k, why in held_numbers(text, quantities).items()}
    quantities = [replace(q, line=place(q.line, q.col)[0], col=place(q.line, q.col)[1]) for q in quantities]
    orphans = [replace(m, line=place(m.line, m.col)[0], col=place(m.line, m.col)[1]) for m in orphans]
    result = bind_answer(slug, path, quantities, orphans, values, script_path=script_path, held=held)
    result.problems = [p for p in result.problems if p.code != "claim-unused"]
    result.lock_path = lock_path
    return result
