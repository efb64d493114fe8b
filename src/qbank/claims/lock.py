"""The binding lock: what every number in the answers binds to, committed so a change of meaning is seen.

``claims.lock`` holds one line per number that binds (or is exempt), in document order per answer::

    answers/b200-h100-mixed-fleet-1tb-fp8-model.md "2 nodes" #2 -> h100_nodes_for_weights
    answers/kv-cache.md "five engineers" -> ! a count in a story

A number is keyed by its answer, its text as written (whitespace folded) and, when the same text occurs
more than once in that answer, its occurrence (``#2``): no line numbers, so an edit that moves lines
leaves the lock alone and a reviewer sees only meaning changes. The target is the value name(s) it binds
to (``lo,hi`` for a range) or ``! reason`` for an exemption. Numbers that fail to bind are not locked
(their own problem is reported).

``qbank check`` reports ``claims-lock-stale`` when the lock exists and differs from the bindings of now
(at the number, or at the lock's line for a number no longer written); ``qbank claims --lock`` rewrites
it; ``qbank claims --lock-diff [BASE]`` lists the changes against the lock (or a base branch's lock).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..problems import Problem, error
from .bind import AnswerClaims, Binding

LOCK_FILE = "claims.lock"
HEADER = (
    "# Every number in the answers and the value it binds to (`! reason`: exempt). Written by\n"
    "# `qbank claims --lock`; `qbank check` fails when it is stale. Review a diff here as a change of meaning.\n"
)
LINE_RE = re.compile(r'^(?P<path>\S+) (?P<text>"(?:[^"\\]|\\.)*")(?: #(?P<nth>\d+))? -> (?P<target>.+)$')


@dataclass(frozen=True, order=True)
class Key:
    """Which number: its answer, its text as written, and which occurrence of that text."""

    path: str
    text: str
    nth: int = 1

    @property
    def file(self) -> str:
        """The file the number is in: the path without a ``#part`` (a concept of ``concepts.yaml``)."""
        return self.path.split("#", 1)[0]

    def shown(self) -> str:
        """The key as the lock writes it."""
        text = json.dumps(self.text, ensure_ascii=False)
        return f"{self.path} {text}" + (f" #{self.nth}" if self.nth > 1 else "")


@dataclass(frozen=True)
class Entry:
    """One number of now: its key, where it is, and its target (None when it does not bind)."""

    key: Key
    line: int
    col: int
    target: str | None


def target_of(b: Binding) -> str | None:
    """What a binding resolves to, as the lock writes it; None when the number fails."""
    if b.status == "exempt":
        return f"! {b.reason}"
    if b.status in {"bound", "ambiguous"}:
        return ",".join(v.name for v in b.values)
    return None


def entries(answers: Iterable[AnswerClaims]) -> list[Entry]:
    """Every number of the answers with its key, in document order."""
    out: list[Entry] = []
    for a in answers:
        seen: Counter[str] = Counter()
        path = a.lock_path or a.path
        for b in a.bindings:
            q = b.quantity
            text = " ".join(q.text.split())
            seen[text] += 1
            out.append(Entry(Key(path, text, seen[text]), q.line, q.col, target_of(b)))
    return out


def render_lock(current: Iterable[Entry]) -> str:
    """The lock file for these entries (those that bind or are exempt)."""
    lines = [f"{e.key.shown()} -> {e.target}" for e in current if e.target is not None]
    return HEADER + "".join(line + "\n" for line in lines)


def with_answer(lock_text: str, path: str, current: Iterable[Entry]) -> str:
    """``lock_text`` with the lines of answer ``path`` replaced by ``current`` (its entries now), in path order.

    What `qbank claims --lock` would write for a repository where only that answer changed: the lock's
    lines of every other answer are kept byte for byte.
    """
    body = [line for line in lock_text.split("\n") if line.strip() and not line.startswith("#")]
    kept = [line for line in body if line.split(" ", 1)[0] != path]
    new = render_lock(current)[len(HEADER) :].splitlines()
    at = next((i for i, line in enumerate(kept) if line.split(" ", 1)[0] > path), len(kept))
    return HEADER + "".join(line + "\n" for line in [*kept[:at], *new, *kept[at:]])


@dataclass(frozen=True)
class Locked:
    """A lock file read back: key -> (target, line in the lock), and its malformed lines."""

    targets: Mapping[Key, tuple[str, int]]
    malformed: tuple[int, ...] = ()


def parse_lock(text: str) -> Locked:
    """Read a lock file's text."""
    targets: dict[Key, tuple[str, int]] = {}
    bad: list[int] = []
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        m = LINE_RE.match(line)
        if m is None:
            bad.append(n)
            continue
        key = Key(m.group("path"), json.loads(m.group("text")), int(m.group("nth") or 1))
        targets[key] = (m.group("target").strip(), n)
    return Locked(targets, tuple(bad))


def read_lock(root: Path) -> Locked | None:
    """The repository's lock, or None when it has none."""
    path = root / LOCK_FILE
    if not path.is_file():
        return None
    return parse_lock(path.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Change:
    """One binding that differs from the lock: before and after (None: not locked / not bound now)."""

    key: Key
    line: int
    col: int
    before: str | None
    after: str | None
    lock_line: int = 0

    def described(self) -> str:
        """The change in words: '"four H100 nodes" now binds to h100_prefill_instances (was: h100_nodes)'."""
        text = json.dumps(self.key.text, ensure_ascii=False)
        nth = f" (occurrence {self.key.nth})" if self.key.nth > 1 else ""
        if self.after is None:
            return f"{text}{nth} is no longer written (was: {self.before})"
        now = f"is exempt ({self.after[2:]})" if self.after.startswith("!") else f"now binds to {self.after}"
        if self.before is None:
            return f"{text}{nth} {now.replace('now binds', 'binds')} (not in the lock)"
        return f"{text}{nth} {now} (was: {self.before})"

    def where(self) -> str:
        """'answers/x.md:10' (the number's line now), or 'answers/x.md' for a number no longer written."""
        return f"{self.key.file}:{self.line}" if self.line else self.key.path


def changes(current: Iterable[Entry], locked: Locked, paths: Iterable[str] | None = None) -> list[Change]:
    """Bindings of now that differ from the lock; numbers that fail to bind now are left to their own problem.

    With ``paths``, only answers among them are compared (the others were not bound this run).
    """
    now = list(current)
    keys = {e.key for e in now}
    only = set(paths) if paths is not None else None
    out: list[Change] = []
    for e in now:
        if e.target is None:
            continue
        before = locked.targets.get(e.key)
        if before is None or before[0] != e.target:
            out.append(Change(e.key, e.line, e.col, before[0] if before else None, e.target))
    for key, (target, n) in sorted(locked.targets.items(), key=lambda kv: kv[1][1]):
        if key not in keys and (only is None or key.path in only):
            out.append(Change(key, 0, 0, target, None, n))
    return sorted(out, key=lambda c: (c.key.path, c.line or 10**9, c.col, c.lock_line))


def stale_problems(current: Iterable[Entry], locked: Locked, paths: Iterable[str] | None = None) -> list[Problem]:
    """``claims-lock-stale`` at every number whose binding differs from the lock (and malformed lock lines)."""
    out = [
        error(LOCK_FILE, n, 1, "claims-lock-malformed", 'expected: PATH "TEXT" [#N] -> NAME[,NAME] | ! REASON')
        for n in locked.malformed
    ]
    hint = "; review it and run `qbank claims --lock`"
    for c in changes(current, locked, paths):
        if c.after is None:
            out.append(error(LOCK_FILE, c.lock_line, 1, "claims-lock-stale", f"{c.key.shown()}: {c.described()}{hint}"))
        else:
            out.append(error(c.key.file, c.line, c.col, "claims-lock-stale", f"{c.described()}{hint}"))
    return out


def render_changes(found: list[Change]) -> str:
    """The binding diff, one line per change: 'answers/x.md:10 "four H100 nodes" now binds to ...'."""
    return "".join(f"{c.where()} {c.described()}\n" for c in found)


def lock_problems(root: Path, answers: list[AnswerClaims]) -> list[Problem]:
    """What ``qbank check`` reports about the lock: nothing without one, else every stale binding."""
    locked = read_lock(root)
    if locked is None:
        return []
    return stale_problems(entries(answers), locked)
