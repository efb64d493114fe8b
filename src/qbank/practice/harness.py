"""The drill test runner, the same code in the browser (Pyodide) and in `qbank verify` (the sandbox).

Standard library only: the site serves this file as is. A test file defines ``test_*`` functions that
use ``assert``; they see the solution's names (both run in one namespace, the solution first).
"""

from __future__ import annotations

import traceback
from typing import Any

MESSAGE_MAX = 400


def _short(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return text if len(text) <= MESSAGE_MAX else text[: MESSAGE_MAX - 1] + "…"


def _line(source: str, lineno: int | None) -> str:
    lines = source.splitlines()
    return lines[lineno - 1].strip() if lineno and 0 < lineno <= len(lines) else ""


def run_suite(solution: str, suites: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """Run every ``test_*`` of each (suite name, test source) against the solution source.

    Returns one result per test in file order: suite, name, ok, message. A solution that does not
    load fails every test with its error; a test file that does not load fails as ``<load>``.
    """
    results: list[dict[str, Any]] = []
    base: dict[str, Any] = {"__name__": "solution"}
    try:
        exec(compile(solution, "solution.py", "exec"), base)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        return [{"suite": s, "name": "<solution>", "ok": False, "message": _short(exc)} for s, _ in suites]
    for suite, source in suites:
        ns = dict(base)
        ns["__name__"] = suite
        try:
            exec(compile(source, f"{suite}.py", "exec"), ns)
        except BaseException as exc:
            results.append({"suite": suite, "name": "<load>", "ok": False, "message": _short(exc)})
            continue
        for name, fn in list(ns.items()):
            if not (name.startswith("test_") and callable(fn)):
                continue
            try:
                fn()
            except AssertionError as exc:
                where = traceback.extract_tb(exc.__traceback__)[-1]
                detail = str(exc) or _line(source, where.lineno) if where.filename == f"{suite}.py" else str(exc)
                detail = detail or "assertion failed"
                results.append({"suite": suite, "name": name, "ok": False, "message": f"line {where.lineno}: {detail}"})
            except BaseException as exc:
                if isinstance(exc, KeyboardInterrupt):
                    raise
                results.append({"suite": suite, "name": name, "ok": False, "message": _short(exc)})
            else:
                results.append({"suite": suite, "name": name, "ok": True, "message": ""})
    return results
