"""Text that remembers where each character came from, and LaTeX rewritten for the grammar."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

Pos = tuple[int, int]
Piece = str | int  # new text (placed at the match start) or a group number (kept with its positions)


@dataclass
class CharText:
    """Text whose every character remembers its source position; substitutions keep the map."""

    chars: list[str]
    pos: list[Pos]

    @property
    def text(self) -> str:
        """The current text."""
        return "".join(self.chars)

    def sub(self, pattern: str | re.Pattern[str], repl: Callable[[re.Match[str]], list[Piece]]) -> None:
        """Replace every match by pieces: new strings sit at the match start, group numbers keep theirs."""
        rx = re.compile(pattern) if isinstance(pattern, str) else pattern
        text = self.text
        chars: list[str] = []
        pos: list[Pos] = []
        last = 0
        for m in rx.finditer(text):
            chars += self.chars[last : m.start()]
            pos += self.pos[last : m.start()]
            anchor = self.pos[m.start()] if m.start() < len(self.pos) else (self.pos[-1] if self.pos else (0, 0))
            for piece in repl(m):
                if isinstance(piece, int):
                    s, e = m.span(piece)
                    if s >= 0:
                        chars += self.chars[s:e]
                        pos += self.pos[s:e]
                else:
                    chars += list(piece)
                    pos += [anchor] * len(piece)
            last = m.end()
        chars += self.chars[last:]
        pos += self.pos[last:]
        self.chars, self.pos = chars, pos

    def blank(self, pattern: str | re.Pattern[str]) -> None:
        """Replace every match by spaces (same length, so words never glue together)."""
        self.sub(pattern, lambda m: [" " * len(m.group(0))])


def keep(*groups: int | str) -> Callable[[re.Match[str]], list[Piece]]:
    return lambda m: list(groups)


LATEX_SYMBOLS = {
    "times": "×",
    "cdot": "·",
    "approx": "≈",
    "sim": "~",
    "simeq": "≃",
    "le": "≤",
    "leq": "≤",
    "ge": "≥",
    "geq": "≥",
    "lt": "<",
    "gt": ">",
    "%": "%",
}


def normalize_math(ct: CharText) -> None:
    """Rewrite LaTeX so the grammar reads it like prose, keeping positions."""
    ct.blank(r"\\(?:tag|label|ref|eqref)\{[^{}]*\}")
    ct.sub(r"\\[dt]?frac\{\s*(\d+)\s*\}\{\s*(\d+)\s*\}", keep(1, "/", 2))
    ct.sub(r"\\(?:text|mathrm|textrm|mathit|mathbf|textbf|operatorname|mbox)\s*\{([^{}]*)\}", keep("\u00a0", 1, " "))
    ct.sub(r"\{,\}", keep(","))
    ct.sub(r"(?<=\d)\\[,;:!]\s*(?=\d{3}(?!\d))", keep())
    ct.sub(r"\\[,;:! >]", lambda m: [" "])
    ct.sub(r"\^\{(-?\d+)\}", keep("^", 1))
    ct.sub(r"\\(%|[A-Za-z]+)", lambda m: [LATEX_SYMBOLS.get(m.group(1), " ")])
    ct.sub(r"[{}&]|\\\\", lambda m: [" " * len(m.group(0))])
