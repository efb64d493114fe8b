"""Binding: each quantity against the answer's verified values (rules in :mod:`.match`), and the problems."""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..problems import Problem, error, warning
from .extract import Marker, Quantity
from .match import (
    Declared,
    comparable,
    compatible,
    distance,
    holds,
    in_written,
    matches,
    near,
    shown,
)
from .nouns import is_count
from .quantity import Reading

__all__ = ["AnswerClaims", "Binder", "Binding", "Declared", "bind_answer", "shown"]


@dataclass
class Binding:
    """What became of one quantity: status, the values it is bound to and the reading that matched."""

    quantity: Quantity
    status: str
    """bound, exempt, unbound, mismatch, comparative, ambiguous, marker, unverified, quoted, tested."""
    values: tuple[Declared, ...] = ()
    reading: Reading | None = None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the quantity passes (bound, ambiguous-but-bound, or exempt)."""
        return self.status in {"bound", "ambiguous", "exempt"}


@dataclass
class AnswerClaims:
    """Every binding of one answer, the problems found and the values stated."""

    slug: str
    path: str
    bindings: list[Binding] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    used: set[str] = field(default_factory=set)
    verified: bool = True
    lock_path: str = ""
    """What ``claims.lock`` keys these numbers by, when not ``path`` (a concept: ``concepts.yaml#<slug>``)."""

    def summary(self) -> dict[str, int]:
        """Counts: quantities, bound, exempt, unbound (everything that fails)."""
        return {
            "quantities": len(self.bindings),
            "bound": sum(1 for b in self.bindings if b.status in {"bound", "ambiguous"}),
            "exempt": sum(1 for b in self.bindings if b.status == "exempt"),
            "unbound": sum(1 for b in self.bindings if not b.ok),
        }


def _q(quantity: Quantity) -> str:
    return f'"{" ".join(quantity.text.split())}"'


def _candidates(
    readings: Iterable[Reading], values: list[Declared], approx: str | None
) -> list[tuple[Declared, Reading]]:
    out = []
    for v in values:
        for r in readings:
            if matches(r, v, approx):
                out.append((v, r))
                break
    return out


def _closest(readings: tuple[Reading, ...], values: list[Declared], n: int = 3) -> str:
    scored = sorted(
        (
            (distance(r, v), v.name, shown(r, v))
            for v in values
            for r in readings[:1]
            if compatible(r.dimension, v.dimension)
        ),
    )
    unit_hint = _unit_hint(readings[0], values)
    if not scored:
        dims = sorted({v.dimension for v in values})
        return (
            unit_hint
            or f"no verified value of dimension {readings[0].dimension}; values are in: {', '.join(dims) or 'none'}"
        )
    if unit_hint:
        return unit_hint
    seen: list[str] = []
    for _d, name, text in scored:
        if len(seen) < n and not any(s.startswith(f"{name} =") for s in seen):
            seen.append(f"{name} = {text}")
    return "closest: " + ", ".join(seen)


def _count_note(reading: Reading) -> str:
    """For a count: the rule, and the unit its value must be declared in."""
    if not is_count(reading.dimension):
        return ""
    return f"; a count binds only to a value declared in its own noun (unit={reading.dimension!r})"


def _unit_hint(reading: Reading, values: list[Declared]) -> str | None:
    """When a plain number equals a value that has a unit (a percent or a noun included), say which unit to write;
    for a count that matches a value declared in another noun or none, say which unit to declare."""
    if is_count(reading.dimension):
        plain = Reading(reading.mantissa * reading.mult, reading.step * reading.mult, 1.0, "number", "")
        for v in values:
            if v.dimension != reading.dimension and matches(plain, v):
                declared = f"declared in {v.unit}" if v.unit else "declared without a unit"
                return f"{v.name} = {v.value:.6g} is {declared}{_count_note(reading)}"
        return None
    if reading.dimension != "number":
        return None
    plain = Reading(reading.mantissa * reading.mult, reading.step * reading.mult, 1.0, "number", "")
    for v in values:
        # any unit, a percent or a noun too: "acceptance is 92" against acc = 92 % wants "92 %", not "0.92"
        if v.unit and matches(plain, Declared(v.name, v.kind, v.value, None, v.line)):
            return f"write its unit: {v.name} is {v.value:.6g} {v.unit}"
    return None


UNREAD_HINT = "write it as a quantity, bind it with {=name} or exempt it with {!reason} (docs/claims.md)"


class Binder:
    """Binds the quantities of one answer to its declared values, collecting problems."""

    def __init__(self, slug: str, path: str, values: list[Declared]) -> None:
        self.result = AnswerClaims(slug, path)
        self.values = values
        self.by_name = {v.name: v for v in values}

    def problem(self, q: Quantity, code: str, message: str, level: str = "error") -> None:
        """Record a problem at the quantity's number."""
        make = error if level == "error" else warning
        self.result.problems.append(make(self.result.path, q.line, q.col, code, message))

    def use(self, *values: Declared) -> None:
        """Mark values as stated."""
        self.result.used.update(v.name for v in values)

    # -- explicit -------------------------------------------------------------------------------------
    def explicit(self, q: Quantity, marker: Marker) -> Binding:
        """A quantity bound by ``{=name}`` (or ``{=lo,hi}`` for a range)."""
        names = [n.strip() for n in marker.body.split(",")]
        if not marker.body or not all(n.isidentifier() for n in names):
            self.problem(q, "claim-marker-malformed", f"'{{={marker.body}}}' must name a value: {{=name}}")
            return Binding(q, "marker")
        unknown = [n for n in names if n not in self.by_name]
        if unknown:
            close = difflib.get_close_matches(unknown[0], list(self.by_name), n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            self.problem(
                q,
                "claim-marker-unknown",
                f"{_q(q)} is bound to {unknown[0]!r}, which verify/{self.result.slug}.py does not declare{hint}",
            )
            return Binding(q, "marker")
        f = q.found
        ends = [f.lo] if f.hi is None else [f.lo, f.hi]
        if len(names) != len(ends):
            self.problem(
                q, "claim-marker-malformed", f"{_q(q)} has {len(ends)} number(s) but the marker names {len(names)}"
            )
            return Binding(q, "marker")
        bound: list[Declared] = []
        reading: Reading | None = None
        for readings, name in zip(ends, names, strict=True):
            v = self.by_name[name]
            hit = next((r for r in readings if compatible(r.dimension, v.dimension)), None)
            if hit is None:
                count = _count_note(readings[0])
                self.problem(
                    q,
                    "claim-mismatch",
                    f"{_q(q)} is bound to {name}, whose unit ({v.unit or 'none'}) cannot express it{count}",
                )
                return Binding(q, "mismatch", (v,))
            if f.relation:
                if not holds(hit, v, f.relation):
                    self.problem(q, "claim-comparative", f"{_q(q)} does not hold: {name} = {shown(hit, v)}")
                    return Binding(q, "comparative", (v,), hit)
            else:
                good = next((r for r in readings if matches(r, v, f.approx)), None)
                if good is None:
                    self.problem(
                        q,
                        "claim-mismatch",
                        f"{_q(q)} is bound to {name} = {shown(hit, v)}, which it does "
                        f"not match at the precision written",
                    )
                    return Binding(q, "mismatch", (v,), hit)
                hit = good
            bound.append(v)
            reading = reading or hit
        self.use(*bound)
        return Binding(q, "bound", tuple(bound), reading)

    # -- automatic ------------------------------------------------------------------------------------
    def comparative(self, q: Quantity) -> Binding:
        """'over 90%': some nearby compatible value must satisfy the comparison."""
        f = q.found
        rel = f.relation or ""
        # only values of the very same dimension: "over 90%" says nothing about a plain count of 2
        near_values = [(v, r) for v in self.values for r in f.lo if comparable(r.dimension, v.dimension) and near(r, v)]
        good = [(v, r) for v, r in near_values if holds(r, v, rel)]
        if good:
            v, r = min(good, key=lambda vr: distance(vr[1], vr[0]))
            self.use(v)
            return Binding(q, "bound", (v,), r)
        if near_values:
            v, r = min(near_values, key=lambda vr: distance(vr[1], vr[0]))
            self.problem(
                q,
                "claim-comparative",
                f"{_q(q)} does not hold for any verified value nearby (closest: {v.name} = {shown(r, v)})",
            )
            return Binding(q, "comparative", (v,), r)
        self.problem(q, "claim-unbound", f"{_q(q)} is not backed by a verified value ({_closest(f.lo, self.values)})")
        return Binding(q, "unbound")

    def end(self, q: Quantity, readings: tuple[Reading, ...]) -> tuple[str, list[tuple[Declared, Reading]]]:
        """Match one number; (status, chosen matches)."""
        found = _candidates(readings, self.values, q.found.approx)
        if not found:
            return "unbound", []
        groups: list[list[tuple[Declared, Reading]]] = []
        for v, r in found:
            for g in groups:
                # the same number under two names is one binding: the prose is right either way
                if math.isclose(in_written(g[0][1], g[0][0]), in_written(r, v), rel_tol=1e-9):
                    g.append((v, r))
                    break
            else:
                groups.append([(v, r)])
        if len(groups) == 1:
            return "bound", groups[0]
        exact = [g for g in groups if math.isclose(in_written(g[0][1], g[0][0]), g[0][1].mantissa, rel_tol=1e-9)]
        if len(exact) == 1:
            return "bound", exact[0]
        groups.sort(key=lambda g: distance(g[0][1], g[0][0]))
        return "ambiguous", [m for g in groups for m in g]

    def automatic(self, q: Quantity) -> Binding:
        """Bind a quantity without a marker."""
        f = q.found
        if f.relation and f.hi is None:
            return self.comparative(q)
        ends = [f.lo] if f.hi is None else [f.lo, f.hi]
        chosen: list[Declared] = []
        reading: Reading | None = None
        ambiguous: list[tuple[Declared, Reading]] = []
        for k, readings in enumerate(ends):
            status, found = self.end(q, readings)
            if status == "unbound":
                which = "" if f.hi is None else (" (its low end)" if k == 0 else " (its high end)")
                self.problem(
                    q,
                    "claim-unbound",
                    f"{_q(q)}{which} is not backed by a verified value ({_closest(readings, self.values)})",
                )
                return Binding(q, "unbound")
            if status == "ambiguous":
                ambiguous = found
            first = [
                v
                for v, r in found
                if math.isclose(in_written(r, v), in_written(found[0][1], found[0][0]), rel_tol=1e-9)
            ]
            self.use(*first)
            chosen.append(found[0][0])
            reading = reading or found[0][1]
        if ambiguous:
            names = ", ".join(f"{v.name} = {shown(r, v)}" for v, r in ambiguous[:3])
            self.problem(
                q,
                "claim-ambiguous",
                f"{_q(q)} matches different values ({names}); bind it with {{={ambiguous[0][0].name}}}",
                level="warning",
            )
            return Binding(q, "ambiguous", tuple(chosen), reading)
        return Binding(q, "bound", tuple(chosen), reading)

    def held(self, q: Quantity, why: str) -> Binding:
        """A quoted number, or one in a sentence marked ``{?}``: never bound automatically."""
        where = "is quoted" if why == "quoted" else "is in a sentence marked {?} as a claim being tested"
        f = q.found
        found = [] if f.relation else _candidates(f.lo, self.values, f.approx)
        would = f" (it would bind to {found[0][0].name} = {shown(found[0][1], found[0][0])})" if found else ""
        self.problem(
            q,
            f"claim-{why}",
            f"{_q(q)} {where}: such a number is never bound automatically{would}; bind it with {{=name}} "
            f"if the answer confirms it, or exempt it with a reason: {{!why}}",
        )
        return Binding(q, why)

    def bind(self, q: Quantity, held: str | None = None) -> Binding:
        """Bind one quantity: exempt, explicit, held back (quoted or tested) or automatic."""
        marker = q.marker
        if marker is None and q.found.rule == "unread":
            self.problem(q, "claim-unread", f"{_q(q)} holds a number the grammar cannot read: {UNREAD_HINT}")
            return Binding(q, "unread")
        if marker is not None and marker.kind == "!":
            if not marker.body:
                self.problem(q, "claim-exempt-no-reason", f"{_q(q)} is exempted without a reason: write {{!why}}")
                return Binding(q, "marker")
            return Binding(q, "exempt", reason=marker.body)
        if marker is not None:
            return self.explicit(q, marker)
        if held is not None:
            return self.held(q, held)
        return self.automatic(q)


def bind_answer(
    slug: str,
    path: str,
    quantities: list[Quantity],
    orphans: list[Marker],
    values: list[Declared] | None,
    script_path: str | None = None,
    held: Mapping[tuple[int, int], str] | None = None,
) -> AnswerClaims:
    """Bind every quantity of one answer; ``values`` None means no verification record exists.

    ``held`` maps the (line, col) of quoted numbers and of numbers in tested sentences to why
    (:mod:`.held`): those bind only explicitly.
    """
    held = held or {}
    binder = Binder(slug, path, values or [])
    result = binder.result
    for m in orphans:
        result.problems.append(
            error(
                path,
                m.line,
                m.col,
                "claim-marker-orphan",
                f"'{{{m.kind}{m.body}}}' follows no quantity; put it right after the number (and its unit), no space",
            )
        )
    if values is None:
        result.verified = False
        pending = [q for q in quantities if not (q.marker and q.marker.kind == "!") and q.found.rule != "unread"]
        for q in quantities:
            if (q.marker and q.marker.kind == "!") or (q.marker is None and q.found.rule == "unread"):
                result.bindings.append(binder.bind(q))
            else:
                result.bindings.append(Binding(q, "unverified"))
        if pending:
            first = pending[0]
            result.problems.append(
                error(
                    path,
                    first.line,
                    first.col,
                    "claims-unverified",
                    f"{len(pending)} number(s) cannot be checked: verify/{slug}.py has no "
                    f"verification record; run `qbank verify {slug}`",
                )
            )
        return result
    for q in quantities:
        result.bindings.append(binder.bind(q, held.get((q.line, q.col))))
    script = script_path or f"verify/{slug}.py"
    for v in values:
        if v.kind == "claim" and v.name not in result.used:
            result.problems.append(
                warning(script, v.line, 1, "claim-unused", f"claim {v.name!r} is never stated in {path}")
            )
    return result
