"""Turn what a run left behind into one outcome and positioned problems; outcomes are never collapsed.

pass, fail (a check failed), error (an exception, no record, a vacuous script, a sandbox breach, a record
that does not hold together, a script the static check refused), timeout, killed (a signal: the OOM killer,
a CPU or file-size limit, a crash), needs-gpu.
"""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..problems import Level, Problem, error, warning

if TYPE_CHECKING:
    from .runner import RawRun, RunOptions

OUTCOMES = ("pass", "fail", "error", "timeout", "killed", "needs-gpu")
ERROR_CODES = {
    "exception": "verify-exception",
    "import": "verify-import",
    "memory": "verify-memory",
    "network": "verify-network",
    "sandbox-write": "verify-sandbox-write",
    "sandbox-exec": "verify-sandbox-exec",
    "sandbox-read": "verify-sandbox-read",
    "sandbox-denied": "verify-sandbox-denied",
    "syntax": "verify-syntax",
    "usage": "verify-usage",
    "exit": "verify-exit",
}
SIGNAL_WHY = {
    "SIGKILL": "SIGKILL: most likely the kernel's OOM killer (memory ran out)",
    "SIGXCPU": "SIGXCPU: its CPU-time limit ran out",
    "SIGXFSZ": "SIGXFSZ: it wrote more than the file-size limit allows",
    "SIGSEGV": "SIGSEGV: a crash in native code",
    "SIGABRT": "SIGABRT: native code aborted",
    "SIGBUS": "SIGBUS: a bad memory access in native code",
}


@dataclass
class Verdict:
    """The outcome of one run with its problems and the counts the report shows."""

    outcome: str
    problems: list[Problem] = field(default_factory=list)
    claims: int = 0
    checks: int = 0
    message: str = ""


def script_line(text: str, script: str) -> int:
    """The innermost line of ``script`` in a traceback dump (faulthandler or Python), 0 when absent."""
    lines = [int(m.group(1)) for m in re.finditer(rf'File "{re.escape(script)}", line (\d+)', text)]
    # faulthandler prints the innermost frame first; Python tracebacks print it last
    if "most recent call first" in text:
        return lines[0] if lines else 0
    return lines[-1] if lines else 0


def classify(
    raw: RawRun,
    rel: str,
    script_abs: str,
    timeout: float,
    options: RunOptions,
    declared: set[int] | None = None,
) -> Verdict:
    """One verdict per run; ``rel`` is ``verify/<slug>.py`` for positions.

    ``declared``: the script's lines holding a declaring call (``lint.declaration_lines``); when given,
    every record line must be one of them.
    """
    where = script_line(raw.faults, script_abs) or raw.last_cell_line
    if raw.timed_out:
        msg = f"timed out after {timeout:g} s (the whole script; set verify.timeout in the question to change it)"
        probs = [error(rel, where, 0, "verify-timeout", msg)]
        if raw.pids_limited:
            probs.append(error(rel, where, 0, "verify-process-limit",
                               f"the process-count limit refused {raw.pids_limited} fork(s) (a fork bomb?)"))
        return Verdict("timeout", probs, message=msg)
    rc = raw.returncode or 0
    if rc < 0:
        name = signal.Signals(-rc).name if -rc in {s.value for s in signal.Signals} else f"signal {-rc}"
        why = SIGNAL_WHY.get(name, name)
        if raw.pids_limited:
            why += f"; the process-count limit refused {raw.pids_limited} fork(s)"
        if name == "SIGKILL" and raw.oom_kills:
            why = "SIGKILL by the kernel's OOM killer (the cgroup's oom_kill count rose)"
        msg = f"killed by {why}"
        return Verdict("killed", [error(rel, where, 0, "verify-killed", msg)], message=msg)
    status = raw.status
    if status is None:
        if rc == 0:
            msg = "exited without a record (os._exit or an early exit before the script finished)"
            return Verdict("error", [error(rel, raw.last_cell_line, 0, "verify-no-record", msg)], message=msg)
        tail = raw.stderr_tail.strip().splitlines()[-1:] or ["no message"]
        msg = f"the launcher failed (exit {rc}): {tail[0]}"
        return Verdict("error", [error(rel, 0, 0, "verify-launcher", msg)], message=msg)

    record = raw.record or {}
    values = record.get("values", [])
    checks = record.get("checks", [])
    verdict = Verdict("pass", claims=sum(1 for v in values if v.get("kind") == "claim"), checks=len(checks))
    problems = verdict.problems
    forged = record_problems(record, status, rel, declared)
    if forged:
        problems += forged
        verdict.outcome, verdict.message = "error", forged[0].message
    err = status.get("error")
    if err:
        code = ERROR_CODES.get(err.get("kind", ""), "verify-exception")
        msg = err.get("message", "error")
        if code == "verify-memory" and options.mem_bytes:
            msg += f" (the address-space limit is {options.mem_bytes / (1 << 30):g} GiB)"
        if err.get("where"):
            msg += f" (raised in {err['where']})"
        problems.append(error(rel, int(err.get("line") or 0), int(err.get("col") or 0), code, msg))
        verdict.outcome, verdict.message = "error", msg
    for c in checks:
        if not isinstance(c, dict):
            continue
        if not c.get("ok"):
            problems.append(
                error(rel, int(c.get("line", 0)), 0, "verify-check-failed", f"check failed: {c.get('message')}")
            )
            if verdict.outcome == "pass":
                verdict.outcome, verdict.message = "fail", f"check failed: {c.get('message')}"
    if raw.pids_limited:
        msg = f"hit the process-count limit {raw.pids_limited} time(s) (a fork bomb, or too many processes)"
        problems.append(error(rel, where if err else 0, 0, "verify-process-limit", msg))
        if verdict.outcome in {"pass", "fail"}:
            verdict.outcome, verdict.message = "error", msg
    if raw.stray:
        msg = f"left {raw.stray} process(es) running after it ended; they were killed"
        problems.append(error(rel, 0, 0, "verify-stray-process", msg))
        if verdict.outcome in {"pass", "fail"}:
            verdict.outcome, verdict.message = "error", msg
    out = status.get("output", {})
    if out.get("dropped"):
        msg = f"printed {out['printed'] / 1e6:.1f} MB; kept the first {out['kept'] / 1e6:.1f} MB of output"
        problems.append(warning(rel, 0, 0, "verify-output-truncated", msg))
    if not err and verdict.claims == 0 and verdict.checks == 0 and not any_needs_gpu(record):
        msg = "declares no claim and no check: nothing is verified"
        problems.append(error(rel, 1, 1, "verify-vacuous", msg))
        verdict.outcome, verdict.message = "error", msg
    return verdict


def record_problems(
    record: dict[str, Any], status: dict[str, Any], rel: str, declared: set[int] | None = None
) -> list[Problem]:
    """Why a record cannot be what the API wrote during a normal run (empty: it holds together).

    - the launcher ran the script to its end (``status.exit == "normal"``): after ``sys.exit()`` the
      checks below it never ran, so no verdict stands (``verify-exit``);
    - the record is of this API version, and its declarations form the chain the API computed as they
      happened: sequence numbers 0..n-1, the head recomputed from the entries (``verify-record-forged``);
    - every declaration's line is a line of the script that holds such a call (``verify-record-forged``).
    """
    from .api import CHAIN_KINDS, chain_link
    from .version import API_VERSION

    out: list[Problem] = []
    if status.get("exit", "normal") != "normal" and not status.get("error"):
        out.append(
            error(rel, 0, 0, "verify-exit", "the script ended early (sys.exit()): the checks after it never ran")
        )
    entries: list[tuple[int, str, dict[str, Any]]] = []
    malformed = False
    for kind in CHAIN_KINDS:
        items = record.get(kind, [])
        if not isinstance(items, list):
            malformed = True
            continue
        for e in items:
            if not isinstance(e, dict) or not isinstance(e.get("seq"), int) or isinstance(e.get("seq"), bool):
                malformed = True
                continue
            entries.append((e["seq"], kind, e))
    if not entries and not record.get("count") and not malformed:
        return out  # nothing declared (the launcher's empty record): vacuity is judged elsewhere

    def forged(line: int, why: str) -> None:
        out.append(error(rel, line, 0, "verify-record-forged", f"the record was not written by the API: {why}"))

    if record.get("api") != API_VERSION:
        forged(0, f"API version {record.get('api')!r}, expected {API_VERSION}")
        return out
    entries.sort(key=lambda t: t[0])
    head = ""
    try:
        for _seq, kind, e in entries:
            head = chain_link(head, kind, e)
    except (TypeError, ValueError):
        malformed = True
    if malformed or [s for s, _k, _e in entries] != list(range(len(entries))):
        forged(0, "declarations are missing their sequence numbers or out of sequence")
    elif record.get("count") != len(entries) or record.get("chain") != head:
        forged(0, "its declarations differ from those the API chained as they happened (edited after the fact)")
    if declared is not None:
        for _seq, kind, e in entries:
            line = e.get("line")
            if not isinstance(line, int) or line not in declared:
                what = e.get("name") or e.get("message") or kind
                forged(line if isinstance(line, int) else 0, f"{what!r} claims line {line!r}, which holds no such call")
    return out


def any_needs_gpu(record: dict[str, Any]) -> bool:
    """True when a kernel check was skipped for want of CUDA."""
    return any(k.get("needs_gpu") for k in record.get("kernels", []))


def problem_json(p: Problem) -> dict[str, Any]:
    """A problem as JSON."""
    return {"path": p.path, "line": p.line, "col": p.col, "level": p.level.value, "code": p.code, "message": p.message}


def problem_from_json(d: dict[str, Any]) -> Problem:
    """The inverse of :func:`problem_json`."""
    return Problem(d["path"], d["line"], d["col"], Level(d["level"]), d["code"], d["message"])
