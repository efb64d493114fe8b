"""Problems are data: a position, a level, a stable code and a message; formatters turn them into text."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from enum import StrEnum


class Level(StrEnum):
    """How bad a problem is: errors fail a run, warnings fail it only under ``--strict``."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, order=True)
class Problem:
    """One positioned problem; ``line`` and ``col`` are 1-based, 0 when the whole file is meant."""

    path: str
    line: int
    col: int
    level: Level
    code: str
    message: str

    def text(self) -> str:
        """The one-line form ``path:line:col: level: message [code]``."""
        return f"{self.path}:{self.line}:{self.col}: {self.level.value}: {self.message} [{self.code}]"

    def github(self) -> str:
        """A GitHub Actions workflow command that annotates the file in a pull request."""
        msg = f"{self.message} [{self.code}]".replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        kind = "error" if self.level is Level.ERROR else "warning"
        return f"::{kind} file={self.path},line={max(self.line, 1)},col={max(self.col, 1)},title={self.code}::{msg}"


def error(path: str, line: int, col: int, code: str, message: str) -> Problem:
    """Shorthand for an error-level problem."""
    return Problem(path, line, col, Level.ERROR, code, message)


def warning(path: str, line: int, col: int, code: str, message: str) -> Problem:
    """Shorthand for a warning-level problem."""
    return Problem(path, line, col, Level.WARNING, code, message)


@dataclass
class Report:
    """All problems of one run plus how many files were read; sorted by position for output."""

    problems: list[Problem] = field(default_factory=list)
    files: int = 0

    def extend(self, problems: Iterable[Problem]) -> None:
        """Add problems, dropping exact duplicates."""
        seen = set(self.problems)
        for p in problems:
            if p not in seen:
                self.problems.append(p)
                seen.add(p)

    @property
    def errors(self) -> int:
        """Number of error-level problems."""
        return sum(1 for p in self.problems if p.level is Level.ERROR)

    @property
    def warnings(self) -> int:
        """Number of warning-level problems."""
        return sum(1 for p in self.problems if p.level is Level.WARNING)

    def failed(self, strict: bool = False) -> bool:
        """True when the run must exit non-zero."""
        return self.errors > 0 or (strict and self.warnings > 0)

    def sorted(self) -> list[Problem]:
        """Problems in file and position order."""
        return sorted(self.problems, key=lambda p: (p.path, p.line, p.col, p.code, p.message))

    def summary(self) -> str:
        """The closing line, e.g. ``3 errors, 1 warning in 212 files``."""

        def plural(n: int, word: str) -> str:
            return f"{n} {word}{'' if n == 1 else 's'}"

        return f"{plural(self.errors, 'error')}, {plural(self.warnings, 'warning')} in {plural(self.files, 'file')}"


FORMATS = ("text", "github", "json")


def render(report: Report, fmt: str) -> str:
    """Render a report in one of :data:`FORMATS`; the result ends with a newline."""
    probs = report.sorted()
    if fmt == "json":
        payload = {
            "problems": [{**asdict(p), "level": p.level.value} for p in probs],
            "errors": report.errors,
            "warnings": report.warnings,
            "files": report.files,
        }
        return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
    lines = [p.github() if fmt == "github" else p.text() for p in probs]
    lines.append(report.summary())
    return "\n".join(lines) + "\n"
