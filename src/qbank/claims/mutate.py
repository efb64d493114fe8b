"""Mutation testing of the claims checker: change a bound number and the check must fail at its position.

Three operators per bound quantity: scale the number by 1.5, change its leading digit, and swap its unit
(GiB<->GB, ms<->us, % -> ×). For comparatives the change goes the way that makes the claim false
("over 90%" becomes "over 135%", "under 1 ms" becomes "under 0.667 ms"): a weaker comparative is still
true. A mutant is *killed* when binding the mutated answer against the same recorded values reports an
error at the number's line and column; *equivalent* when the mutated text is still true of the value the
original was bound to (e.g. "about 320 GB" for 343.6 GB); otherwise it *survived*. The score is
killed / (killed + survived).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from ..problems import Problem
from .bind import Binder, Binding, bind_answer
from .chartext import Pos
from .check import check_answer_text
from .extract import MARKER_RE, Marker, Quantity, extract
from .held import held_numbers
from .match import Declared, matches
from .nouns import is_count, spelled, swap_for

UNIT_SWAPS = {
    "GiB": "GB",
    "GB": "GiB",
    "MiB": "MB",
    "MB": "MiB",
    "KiB": "KB",
    "KB": "KiB",
    "TiB": "TB",
    "TB": "TiB",
    "GiB/s": "GB/s",
    "GB/s": "GiB/s",
    "TB/s": "TiB/s",
    "ms": "us",
    "us": "ms",
    "µs": "ms",
    "ns": "us",
    "%": "×",
}
DIGIT_RULES = {"digits", "unit", "suffix", "count-noun", "factor", "range", "ratio", "scale-word", "power"}


@dataclass(frozen=True)
class Mutant:
    """One changed number: which operator, where, and the whole mutated document."""

    op: str
    line: int
    col: int
    before: str
    after: str
    text: str
    bound: str = ""
    """Names of the values the original number was bound to (what an explicit marker should say)."""


@dataclass
class MutationResult:
    """Outcome counts and the mutants that were not killed."""

    killed: int = 0
    equivalent: list[Mutant] = field(default_factory=list)
    survived: list[Mutant] = field(default_factory=list)

    @property
    def total(self) -> int:
        """Mutants that count toward the score."""
        return self.killed + len(self.survived)

    @property
    def score(self) -> float:
        """Killed over killed + survived (1.0 when there is nothing to kill)."""
        return self.killed / self.total if self.total else 1.0

    def add(self, other: MutationResult) -> None:
        """Merge another result into this one."""
        self.killed += other.killed
        self.equivalent += other.equivalent
        self.survived += other.survived


def fmt(x: float) -> str:
    """A number as an author would write it: up to 6 significant digits, no exponent for usual sizes."""
    text = f"{x:.6f}".rstrip("0").rstrip(".") if 1e-4 <= abs(x) < 1e15 else f"{x:.6g}"
    return text or "0"


def _shift_digit(core: str, up: bool) -> str | None:
    """Change the leading non-zero digit of a written number, up or down."""
    m = re.search(r"[1-9]", core)
    if m is None:
        return None
    d = int(m.group(0))
    new = (str(d + 1) if d < 9 else "10") if up else str(d - 1)
    return core[: m.start()] + new + core[m.end() :]


def _number_mutants(lines: list[str], q: Quantity, start: Pos, end: Pos, value: float, tag: str) -> list[Mutant]:
    """Scale and leading-digit mutants of one written number (empty when it spans lines)."""
    if end[0] != start[0] or end[1] <= start[1]:
        return []
    line = lines[start[0] - 1]
    core = line[start[1] - 1 : end[1] - 1]
    down = q.found.relation in {"<", "<="}

    def doc(new: str) -> str:
        changed = line[: start[1] - 1] + new + line[end[1] - 1 :]
        return "\n".join([*lines[: start[0] - 1], changed, *lines[start[0] :]])

    scaled = fmt(value / 1.5 if down else value * 1.5)
    out = [Mutant("scale" + tag, q.line, q.col, core, scaled, doc(scaled))]
    if q.found.rule in DIGIT_RULES and re.fullmatch(r"[\d.,]+", core):
        shifted = _shift_digit(core, up=not down)
        if shifted is not None and shifted != core:
            out.append(Mutant("digit" + tag, q.line, q.col, core, shifted, doc(shifted)))
    return out


def mutants(text: str, q: Quantity) -> list[Mutant]:
    """The mutants of one quantity in a document; a range's second number is mutated too."""
    lines = text.split("\n")
    f = q.found
    reading = f.lo[0]
    value = reading.mantissa * (reading.mult if f.rule in {"exponent", "times-ten"} else 1.0)
    out = _number_mutants(lines, q, (q.line, q.col), q.core_end, value, "")
    if f.hi is not None and q.hi_core is not None:
        out += _number_mutants(lines, q, q.hi_core[0], q.hi_core[1], f.hi[0].mantissa, "-high")
    end_line, end_col = q.core_end
    line = lines[q.line - 1]
    unit = f.hi[0].unit if f.hi else reading.unit
    swap = UNIT_SWAPS.get(unit)
    if swap is not None and end_line == q.line:
        span_end = q.col - 1 + len(q.text.split("\n")[0])
        rest = line[end_col - 1 : span_end]
        found = list(re.finditer(rf"(?<![\w/]){re.escape(unit)}(?![\w/])", rest))
        if found:
            m = found[-1]
            a, b = end_col - 1 + m.start(), end_col - 1 + m.end()
            changed = "\n".join([*lines[: q.line - 1], line[:a] + swap + line[b:], *lines[q.line :]])
            out.append(Mutant("unit", q.line, q.col, unit, swap or "(none)", changed))
    return out


def _still_true(mutant: Mutant, original: Binding, values: list[Declared], slug: str, path: str) -> bool:
    """Whether the mutated number is still a true statement of the value(s) the original was bound to."""
    quantities, _ = extract(mutant.text)
    here = [q for q in quantities if (q.line, q.col) == (mutant.line, mutant.col)]
    if not here or not original.values:
        return False
    q = here[0]
    names = ",".join(v.name for v in original.values)
    if q.found.hi is not None and len(original.values) == 1:
        return False
    marker = Marker("=", names, q.line, q.col)
    forced = replace(q, marker=marker)
    binder = Binder(slug, path, values)
    return binder.bind(forced).status == "bound"


def mutate_answer(slug: str, path: str, text: str, values: list[Declared]) -> MutationResult:
    """Mutate every bound number of one answer and bind each mutant against the same values."""
    result = MutationResult()
    base = check_answer_text(slug, path, text, values)
    for binding in base.bindings:
        if binding.status not in {"bound", "ambiguous"}:
            continue
        q = binding.quantity
        names = ",".join(v.name for v in binding.values)
        for mutant in (replace(m, bound=names) for m in mutants(text, q)):
            after = check_answer_text(slug, path, mutant.text, values)
            if any(p.line == q.line and p.col == q.col and p.level.value == "error" for p in after.problems):
                result.killed += 1
            elif _still_true(mutant, binding, values, slug, path):
                result.equivalent.append(mutant)
            else:
                result.survived.append(mutant)
    return result


def bind_survivors(text: str, survivors: list[Mutant], quantities: list[Quantity]) -> str:
    """The answer with an explicit ``{=name}`` after every quantity that had a surviving mutant."""
    lines = text.split("\n")
    at = {(q.line, q.col): q for q in quantities}
    targets = {}
    for m in survivors:
        q = at.get((m.line, m.col))
        if q is not None and q.marker is None and m.bound and q.end[0] == q.line:
            targets[q.end] = m.bound
    for (line, col), names in sorted(targets.items(), reverse=True):
        row = lines[line - 1]
        lines[line - 1] = row[: col - 1] + "{=" + names + "}" + row[col - 1 :]
    return "\n".join(lines)


# -- binding mutants ------------------------------------------------------------------------------------
# Two more operators attack what a number *means* rather than what it says. A *re-point* keeps the text
# and makes the number bind to another value that matches it as well (the same magnitude, another name):
# only the binding lock can see that, so it is checked against the lock of the unmutated answer. A
# *noun swap* writes another count noun ("4 nodes" -> "4 GPUs"): the count-noun rule must see that by
# itself, so it is checked without the lock. Either is caught by an error at the number's position.


@dataclass
class BindingMutation:
    """Outcomes of the binding mutants of one answer (or many, added up)."""

    repointed: int = 0
    repoint_caught: int = 0
    repoint_caught_without_lock: int = 0
    swapped: int = 0
    swap_caught: int = 0
    survived: list[Mutant] = field(default_factory=list)

    @property
    def total(self) -> int:
        """Binding mutants made."""
        return self.repointed + self.swapped

    @property
    def caught(self) -> int:
        """Binding mutants caught."""
        return self.repoint_caught + self.swap_caught

    @property
    def score(self) -> float:
        """Caught over made (1.0 when none was made)."""
        return self.caught / self.total if self.total else 1.0

    def add(self, other: BindingMutation) -> None:
        """Merge another result into this one."""
        self.repointed += other.repointed
        self.repoint_caught += other.repoint_caught
        self.repoint_caught_without_lock += other.repoint_caught_without_lock
        self.swapped += other.swapped
        self.swap_caught += other.swap_caught
        self.survived += other.survived


REPOINTS_PER_NUMBER = 2


def _errors_at(problems: list[Problem], q: Quantity) -> bool:
    return any(p.line == q.line and p.col == q.col and p.level.value == "error" for p in problems)


def _alternatives(binding: Binding, values: list[Declared]) -> list[Declared]:
    """Other values the number also matches (same magnitude, another name): where a re-point can go."""
    f = binding.quantity.found
    names = {v.name for v in binding.values}
    ends = [f.lo] if f.hi is None else [f.lo, f.hi]
    out = [v for v in values if v.name not in names and any(matches(r, v, f.approx) for r in ends[0])]
    return out[:REPOINTS_PER_NUMBER]


def _repoint_explicit(text: str, q: Quantity, target: str) -> str | None:
    """The document with the number's ``{=name}`` naming ``target`` instead."""
    m = q.marker
    if m is None or "," in m.body:
        return None
    lines = text.split("\n")
    row = lines[m.line - 1]
    found = MARKER_RE.match(row, m.col - 1)
    if found is None:
        return None
    lines[m.line - 1] = row[: found.start()] + "{=" + target + "}" + row[found.end() :]
    return "\n".join(lines)


def _swap_noun(text: str, q: Quantity, unit: str) -> Mutant | None:
    """The document with the count noun after the number written as another count noun."""
    lines = text.split("\n")
    end_line, end_col = q.core_end
    if end_line != q.line or q.end[0] != q.line:
        return None
    row = lines[q.line - 1]
    span = row[end_col - 1 : q.end[1] - 1]
    for word in (unit, spelled(unit, singular=True)):
        found = list(re.finditer(rf"(?<!\w){re.escape(word)}(?!\w)", span))
        if found:
            m = found[-1]
            new = spelled(swap_for(unit), singular=word != unit)
            a, b = end_col - 1 + m.start(), end_col - 1 + m.end()
            changed = "\n".join([*lines[: q.line - 1], row[:a] + new + row[b:], *lines[q.line :]])
            return Mutant("noun", q.line, q.col, word, new, changed)
    return None


def mutate_bindings(slug: str, path: str, text: str, values: list[Declared]) -> BindingMutation:
    """Re-point every bound number to each other value it matches, and swap every count noun."""
    from .lock import entries, parse_lock, render_lock, stale_problems

    result = BindingMutation()
    quantities, orphans = extract(text)
    held = held_numbers(text, quantities)
    base = bind_answer(slug, path, quantities, orphans, values, held=held)
    locked = parse_lock(render_lock(entries([base])))
    for binding in base.bindings:
        if binding.status not in {"bound", "ambiguous"}:
            continue
        q = binding.quantity
        names = ",".join(v.name for v in binding.values)
        for target in _alternatives(binding, values):
            if q.marker is not None:
                doc = _repoint_explicit(text, q, target.name)
                if doc is None:
                    continue
                after = check_answer_text(slug, path, doc, values)
            else:
                doc = text
                gone = {v.name for v in binding.values}
                kept = [v for v in values if v.name not in gone]
                after = bind_answer(slug, path, quantities, orphans, kept, held=held)
            mutant = Mutant("repoint", q.line, q.col, names, target.name, doc, names)
            result.repointed += 1
            without_lock = _errors_at(after.problems, q)
            result.repoint_caught_without_lock += without_lock
            if without_lock or _errors_at(stale_problems(entries([after]), locked), q):
                result.repoint_caught += 1
            else:
                result.survived.append(mutant)
        reading = binding.reading or q.found.lo[0]
        unit = q.found.hi[0].unit if q.found.hi else reading.unit
        if not is_count(unit):
            continue
        swapped = _swap_noun(text, q, unit)
        if swapped is None:
            continue
        result.swapped += 1
        if _errors_at(check_answer_text(slug, path, swapped.text, values).problems, q):
            result.swap_caught += 1
        else:
            result.survived.append(replace(swapped, bound=names))
    return result
