"""Outcome rules on recorded runs: signals, missing records, vacuity, and the line a traceback points at."""

from __future__ import annotations

import signal
from typing import Any

from qbank.verify.api import CHAIN_KINDS, chain_link
from qbank.verify.options import RunOptions
from qbank.verify.outcomes import classify, script_line
from qbank.verify.runner import RawRun

SCRIPT = "/repo/verify/x.py"


def sealed(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` as the API writes it: entries numbered in list order, the chain over them, the API version."""
    from qbank.verify.version import API_VERSION

    out: dict[str, Any] = {"api": API_VERSION, **record}
    head, seq = "", 0
    for kind in CHAIN_KINDS:
        items = []
        for e in record.get(kind, []):
            e = {**e, "seq": seq}
            head, seq = chain_link(head, kind, e), seq + 1
            items.append(e)
        if kind in record:
            out[kind] = items
    return {**out, "chain": head, "count": seq}


def raw(**kw: object) -> RawRun:
    base: dict[str, object] = dict(
        returncode=0,
        timed_out=False,
        duration=0.1,
        status={"error": None, "cells": [], "output": {}},
        record=sealed({"values": [{"name": "a", "kind": "claim", "line": 3}], "checks": []}),
        stderr_tail="",
        stdout_tail="",
        faults="",
        last_cell_line=3,
        stray=0,
    )
    base.update(kw)
    return RawRun(**base)  # type: ignore[arg-type]


def test_sigkill_reads_as_the_oom_killer() -> None:
    v = classify(raw(returncode=-signal.SIGKILL, status=None), "verify/x.py", SCRIPT, 5, RunOptions())
    assert (v.outcome, v.problems[0].code) == ("killed", "verify-killed") and "OOM killer" in v.message
    v = classify(raw(returncode=-signal.SIGKILL, status=None, oom_kills=1), "verify/x.py", SCRIPT, 5, RunOptions())
    assert "oom_kill count rose" in v.message


def test_cpu_limit_signal() -> None:
    faults = f'Fatal Python error: Aborted\n\nStack (most recent call first):\n  File "{SCRIPT}", line 7 in <module>\n'
    v = classify(raw(returncode=-signal.SIGXCPU, status=None, faults=faults), "verify/x.py", SCRIPT, 5, RunOptions())
    assert (v.outcome, v.problems[0].line) == ("killed", 7) and "CPU-time limit" in v.message


def test_launcher_failure_is_not_a_missing_record() -> None:
    v = classify(raw(returncode=1, status=None, stderr_tail="boom\n"), "verify/x.py", SCRIPT, 5, RunOptions())
    assert v.problems[0].code == "verify-launcher" and "boom" in v.message


def test_givens_alone_are_vacuous() -> None:
    rec = sealed({"values": [{"name": "a", "kind": "given", "line": 3}], "checks": []})
    v = classify(raw(record=rec), "verify/x.py", SCRIPT, 5, RunOptions())
    assert (v.outcome, v.problems[0].code) == ("error", "verify-vacuous")


def test_script_line_prefers_the_innermost_frame() -> None:
    py = f'  File "{SCRIPT}", line 3, in <module>\n  File "{SCRIPT}", line 9, in f\n'
    assert script_line(py, SCRIPT) == 9
    fh = f'Stack (most recent call first):\n  File "{SCRIPT}", line 9 in f\n  File "{SCRIPT}", line 3 in <module>\n'
    assert script_line(fh, SCRIPT) == 9
    assert script_line("nothing", SCRIPT) == 0


def _classify(record: dict[str, Any], declared: set[int] | None = None, **status: Any) -> Any:
    st = {"error": None, "cells": [], "output": {}, "exit": "normal", **status}
    return classify(raw(record=record, status=st), "verify/x.py", SCRIPT, 5, RunOptions(), declared)


CHECKS = {"values": [{"name": "a", "kind": "claim", "line": 3}], "checks": [{"message": "m", "ok": False, "line": 4}]}


def test_an_untouched_record_holds_together() -> None:
    v = _classify(sealed(CHECKS), {3, 4})
    assert (v.outcome, [p.code for p in v.problems]) == ("fail", ["verify-check-failed"])


def test_a_flipped_check_breaks_the_chain() -> None:
    rec = sealed(CHECKS)
    rec["checks"][0]["ok"] = True
    v = _classify(rec, {3, 4})
    assert (v.outcome, [p.code for p in v.problems]) == ("error", ["verify-record-forged"])
    assert "edited after the fact" in v.message


def test_removed_checks_break_the_chain() -> None:
    rec = sealed(CHECKS)
    rec["checks"] = []
    assert [p.code for p in _classify(rec, {3, 4}).problems] == ["verify-record-forged"]


def test_entries_without_sequence_numbers_are_forged() -> None:
    rec = {**sealed(CHECKS), "checks": [{"message": "m", "ok": True, "line": 4}]}
    assert "sequence" in _classify(rec, {3, 4}).message


def test_a_line_without_such_a_call_is_forged() -> None:
    v = _classify(sealed(CHECKS), {3})
    assert ("verify-record-forged", 4) in [(p.code, p.line) for p in v.problems] and v.outcome == "error"


def test_another_api_version_is_forged() -> None:
    rec = {**sealed(CHECKS), "api": 1}
    assert "API version 1" in _classify(rec, {3, 4}).message


def test_an_early_sys_exit_is_no_verdict() -> None:
    rec = sealed({"values": [{"name": "a", "kind": "claim", "line": 3}], "checks": []})
    v = _classify(rec, {3}, exit="sys.exit")
    assert (v.outcome, [p.code for p in v.problems]) == ("error", ["verify-exit"])
