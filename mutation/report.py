"""The mutation report: cosmic-ray sessions and the equivalent-mutant list -> scores per module. Pure.

A mutant is ``killed`` (a test failed, errored or timed out), ``survived`` (every mapped test passed),
``equivalent`` (survived, and [[equivalent]] in mutation/modules.toml says why it cannot behave differently,
or it lies in an annotation Python never evaluates)
``skipped`` (its operator family is not run: [[run.skip]]), ``error`` (it could not be applied or the worker
died) or ``pending`` (not run yet: an interrupted session). The score of a module is
killed / (killed + survived): equivalent and skipped mutants are out of it, and both are listed.
"""

from __future__ import annotations

import ast
import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Mutant:
    """One mutation of one module and what the tests made of it."""

    path: str
    operator: str
    line: int
    col: int
    source: str  # the line as written, stripped
    outcome: str  # killed, survived, equivalent, skipped, error
    diff: str = ""
    reason: str = ""  # why equivalent or skipped
    timeout: bool = False  # killed because its tests ran past the timeout, not because one failed


@dataclass
class ModuleScore:
    """One module's result."""

    name: str
    path: str
    seconds: float
    mutants: list[Mutant] = field(default_factory=list)

    def count(self, outcome: str) -> int:
        """How many mutants had this outcome."""
        return sum(1 for m in self.mutants if m.outcome == outcome)

    @property
    def score(self) -> float | None:
        """Killed over killed plus survived (None when nothing ran)."""
        ran = self.count("killed") + self.count("survived")
        return self.count("killed") / ran if ran else None


TIMEOUT = "timeout"  # cosmic-ray's output for a mutant whose tests ran past the timeout (testing.run_tests)


def recorded_seconds(out: Path, name: str) -> float | None:
    """The seconds a module's session took (``NAME.seconds.json`` in ``out``, its finished runs added up); None
    when none is recorded."""
    recorded = out / f"{name}.seconds.json"
    return float(json.loads(recorded.read_text())["seconds"]) if recorded.exists() else None


def classify(worker_outcome: str | None, test_outcome: str | None) -> str:
    """One mutant's outcome from cosmic-ray's two fields (stored as the enum names: ``NORMAL``, ``KILLED``)."""
    worker_outcome = (worker_outcome or "").lower() or None
    test_outcome = (test_outcome or "").lower() or None
    if worker_outcome == "skipped":
        return "skipped"
    if worker_outcome != "normal" or test_outcome is None:
        return "error"  # the mutation could not be applied or the worker died: neither killed nor survived
    return "survived" if test_outcome == "survived" else "killed"


def mutated_lines(diff: str) -> str:
    """The lines a mutant's diff adds (what the mutated code says)."""
    return "\n".join(x[1:] for x in diff.splitlines() if x.startswith("+") and not x.startswith("+++"))


def matches(eq: Mapping[str, Any], path: str, operator: str, source: str, col: int, diff: str) -> bool:
    """Whether a listed equivalent names this mutant: same module, operator and source line; and, when the entry
    gives them, the column (a line can hold the operator twice) and text the mutated line holds (one operator
    can make several mutants at one place, e.g. a number replaced by n+1 and by n-1)."""
    return (
        (eq["path"], eq["operator"], eq["line"].strip()) == (path, operator, source)
        and eq.get("col", col) == col
        and eq.get("mutated", "") in mutated_lines(diff)
    )


def equivalent_reason(
    path: str, operator: str, source: str, col: int, diff: str, equivalents: Sequence[Mapping[str, Any]]
) -> str | None:
    """The reason a listed equivalent gives for this surviving mutant, if one matches it."""
    for eq in equivalents:
        if matches(eq, path, operator, source, col, diff):
            return str(eq["reason"])
    return None


ANNOTATION = "in a type annotation of a function (parameters, return, local variables): never evaluated at run time"


def annotation_spans(source: str) -> list[tuple[int, int, int, int]]:
    """(line, col, end line, end col) of every annotation that Python never evaluates: a function's parameter
    and return annotations under ``from __future__ import annotations``, and local variables' annotations."""
    tree = ast.parse(source)
    postponed = any(
        isinstance(n, ast.ImportFrom) and n.module == "__future__" and any(a.name == "annotations" for a in n.names)
        for n in tree.body
    )
    found: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if postponed:
                args = node.args
                every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
                found += [a.annotation for a in every if a is not None and a.annotation is not None]
                found += [node.returns] if node.returns is not None else []
            found += [n.annotation for n in ast.walk(node) if isinstance(n, ast.AnnAssign) and n.simple]
    return [(a.lineno, a.col_offset, a.end_lineno or a.lineno, a.end_col_offset or 0) for a in found]


def in_spans(line: int, col: int, spans: Sequence[tuple[int, int, int, int]]) -> bool:
    """Whether a position (1-based line, 0-based column) lies inside one of the spans."""
    return any((line, col) >= (a, b) and (line, col) < (c, d) for a, b, c, d in spans)


def skip_reason(operator: str, skips: Sequence[Mapping[str, Any]]) -> str:
    """Why an operator family is not run (the first [[run.skip]] whose pattern matches)."""
    import re

    for skip in skips:
        if re.match(skip["operators"], operator):
            return str(skip["reason"])
    return ""


def read_session(
    session: Path,
    path: str,
    lines: Sequence[str],
    equivalents: Sequence[Mapping[str, Any]],
    skips: Sequence[Mapping[str, Any]],
) -> list[Mutant]:
    """The mutants of one cosmic-ray session, classified (``lines``: the module's source, unmutated)."""
    conn = sqlite3.connect(session)
    try:
        rows = conn.execute(
            "SELECT s.operator_name, s.start_pos_row, s.start_pos_col, r.worker_outcome, r.test_outcome, r.diff,"
            " r.output"
            " FROM mutation_specs s LEFT JOIN work_results r ON r.job_id = s.job_id"
            " ORDER BY s.start_pos_row, s.start_pos_col, s.operator_name"
        ).fetchall()
    finally:
        conn.close()
    out = []
    spans = annotation_spans("\n".join(lines) + "\n")
    for operator, row, col, worker, test, diff, output in rows:
        source = lines[row - 1].strip() if 0 < row <= len(lines) else ""
        outcome = classify(worker, test) if worker is not None else "pending"  # not run yet (an interrupted run)
        reason = ""
        if outcome == "survived":
            listed = equivalent_reason(path, operator, source, col, diff or "", equivalents)
            eq = ANNOTATION if in_spans(row, col, spans) else listed
            if eq is not None:
                outcome, reason = "equivalent", eq
        elif outcome == "skipped":
            reason = skip_reason(operator, skips)
        timeout = outcome == "killed" and output == TIMEOUT
        out.append(Mutant(path, operator, row, col, source, outcome, diff or "", reason, timeout))
    return out


def stale_equivalents(scores: Iterable[ModuleScore], equivalents: Sequence[Mapping[str, Any]]) -> list[str]:
    """Listed equivalents of the modules run that no surviving mutant matches any more (killed, or code moved)."""
    ran = {s.path: s for s in scores}
    stale = []
    for eq in equivalents:
        score = ran.get(eq["path"])
        if score is None:
            continue
        if not any(
            m.outcome == "equivalent" and matches(eq, m.path, m.operator, m.source, m.col, m.diff)
            for m in score.mutants
        ):
            stale.append(f"{eq['path']}: {eq['operator']} on `{eq['line'].strip()}`")
    return stale


def _pct(score: float | None) -> str:
    return "n/a" if score is None else f"{100 * score:.1f}%"


def markdown(
    scores: Sequence[ModuleScore], stale: Sequence[str], tool: str, run: Mapping[str, Any] | None = None
) -> str:
    """The report as Markdown: a table of scores, then every surviving and equivalent mutant. ``run``: the last
    whole run's record (``run.json``), shown when there is one."""
    total = sum(s.seconds for s in scores)
    lines = [
        "# Mutation report",
        "",
        f"Tool: {tool}. Modules: {len(scores)}; run time {total:.0f} s (the modules' seconds added up).",
        "",
    ]
    if run:
        lines += [
            f"Last whole run (every module): started {run['started']} on commit {run['commit'] or '(unknown)'}, "
            f"{len(run['modules'])} module(s), {run['jobs']} job(s) side by side, "
            f"{float(run['wall_seconds']):.0f} s wall" + (" (resumed: this part only)." if run.get("resumed") else "."),
            "",
        ]
    lines += [
        "| module | mutants | killed | survived | equivalent | skipped | error | pending | score | seconds |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for s in scores:
        lines.append(
            f"| {s.path} | {len(s.mutants)} | {s.count('killed')} | {s.count('survived')} | {s.count('equivalent')} "
            f"| {s.count('skipped')} | {s.count('error')} | {s.count('pending')} | {_pct(s.score)} | {s.seconds:.0f} |"
        )
    for title, outcome in (("Surviving mutants", "survived"), ("Equivalent mutants", "equivalent")):
        found = [m for s in scores for m in s.mutants if m.outcome == outcome]
        lines += ["", f"## {title} ({len(found)})", ""]
        for m in found:
            why = f" — {m.reason}" if m.reason else ""
            lines.append(f"- `{m.path}:{m.line}:{m.col}` {m.operator}: `{m.source}`{why}")
    slow = [m for s in scores for m in s.mutants if m.timeout]
    lines += ["", f"## Killed by a timeout ({len(slow)})", ""]
    lines += [
        "Counted as killed: no test failed, the tests ran past the module's timeout (a hang is noticed). Under load "
        "an equivalent mutant can time out too; each is worth a look.",
        "",
    ] * bool(slow)
    lines += [f"- `{m.path}:{m.line}:{m.col}` {m.operator}: `{m.source}`" for m in slow]
    if stale:
        lines += ["", f"## Stale equivalents ({len(stale)}): listed, but no such mutant survives", ""]
        lines += [f"- {s}" for s in stale]
    return "\n".join(lines) + "\n"


def as_json(scores: Sequence[ModuleScore], stale: Sequence[str]) -> str:
    """The report as JSON (one object per module, every mutant with its outcome)."""
    doc = {
        "modules": [
            {
                "name": s.name,
                "path": s.path,
                "seconds": round(s.seconds, 1),
                "score": s.score,
                "counts": {o: s.count(o) for o in ("killed", "survived", "equivalent", "skipped", "error", "pending")},
                "killed_by_timeout": sum(1 for m in s.mutants if m.timeout),
                "mutants": [asdict(m) for m in s.mutants if m.outcome != "skipped"],
            }
            for s in scores
        ],
        "stale_equivalents": list(stale),
    }
    return json.dumps(doc, indent=1) + "\n"
