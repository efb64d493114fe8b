"""`make mutation`: run cosmic-ray on each configured module with its mapped tests, then write the report.

Usage: python -m mutation.run [--only NAME ...] [--out DIR] [--jobs N] [--report-only | --retest | --resume]

Each module is mutated in place (cosmic-ray restores it after each mutant); the run refuses to start on a
module with uncommitted changes, and checks every module is byte-identical afterwards. Sessions, the report
(``report.md``, ``report.json``) and each module's log go to ``--out`` (``.mutation/`` by default).
``--retest`` runs again, with each module's current tests, only the mutants its session records as
surviving and not equivalent (after tests were added for them), and rewrites their results in the session;
killed mutants stay killed as long as tests are only added. ``--resume`` keeps a module's session (a run
stopped for time) and runs only its mutants without a result; it refuses a session whose module changed since
the session was made (the mutants' positions would be wrong), and starts afresh where there is no session.
``--jobs N`` runs N modules side by side, each in its own copy of the tree (``mutation/parallel.py``), so the
working tree is never mutated. A whole run (every module, not a retest) records its start, commit, jobs and wall time in
``run.json``, which the report shows; a run of some modules (``--only``) leaves it as it was.
Exit 0 when every mutant that ran was killed or is a listed equivalent, 1 otherwise, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import IO, Any

from mutation.parallel import WorkerSetupError, run_all
from mutation.report import (
    ModuleScore,
    annotation_spans,
    as_json,
    equivalent_reason,
    in_spans,
    markdown,
    read_session,
    recorded_seconds,
    stale_equivalents,
)

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "mutation" / "modules.toml"
TOOL = "cosmic-ray 8.7.0"


def load() -> dict[str, Any]:
    """The mutation configuration."""
    with CONFIG.open("rb") as fh:
        return tomllib.load(fh)


def test_command(tests: list[str]) -> str:
    """The mapped tests, stopping at the first failure; no bytecode (a mutant and the original can share an
    mtime second and a size, and a stale .pyc would then stand in for the mutant), no cache, fixed order."""
    args = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", *tests]
    return "env PYTHONDONTWRITEBYTECODE=1 " + shlex.join(args)


def session_config(module: dict[str, Any], run: dict[str, Any], timeout: float) -> str:
    """cosmic-ray's TOML for one module."""
    skips = [s["operators"] for s in run.get("skip", [])]
    return "\n".join(
        [
            "[cosmic-ray]",
            f"module-path = {_toml(module['path'])}",
            f"timeout = {timeout:.0f}.0",
            "excluded-modules = []",
            f"test-command = {_toml(test_command(module['tests']))}",
            "",
            "[cosmic-ray.distributor]",
            'name = "local"',
            "",
            "[cosmic-ray.filters.operators-filter]",
            "exclude-operators = [" + ", ".join(_toml(s) for s in skips) + "]",
            "",
        ]
    )


def _toml(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _tool(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def _baseline(module: dict[str, Any], fh: IO[str], log: Path) -> None:
    """Run the module's tests unmutated into ``fh``; stop when they fail (no mutant could be judged)."""
    baseline = subprocess.run(test_command(module["tests"]), shell=True, cwd=ROOT, stdout=fh, stderr=fh)
    if baseline.returncode != 0:
        raise SystemExit(f"mutation: the tests of {module['path']} fail unmutated; see {log}")


def steps(cfg: Path, session: Path, fresh: bool) -> list[list[str]]:
    """cosmic-ray's commands for one module: a fresh session is made and its skipped operators marked first;
    ``exec`` runs only the mutants the session holds no result for (all of a fresh one's)."""
    exec_ = [_tool("cosmic-ray"), "exec", str(cfg), str(session)]
    if not fresh:
        return [exec_]
    init = [_tool("cosmic-ray"), "init", str(cfg), str(session)]
    return [init, [_tool("cr-filter-operators"), str(session), str(cfg)], exec_]


def resumable(module: dict[str, Any], out: Path) -> bool:
    """Whether ``--resume`` can keep the module's session: True when it exists and was made from the module as it
    is now, False when there is none (start afresh); a changed module or an unrecorded one stops the run."""
    name, path = module["name"], ROOT / module["path"]
    session, made = out / f"{name}.sqlite", out / f"{name}.source.sha256"
    if not session.exists():
        return False
    if not made.exists():
        raise SystemExit(f"mutation: {name}: the session does not record its module's digest; run it afresh")
    if made.read_text().strip() != _digest(path):
        raise SystemExit(f"mutation: {name}: {module['path']} changed since the session was made; run it afresh")
    return True


def run_module(module: dict[str, Any], run: dict[str, Any], out: Path, resume: bool = False) -> float:
    """Mutate one module and test every mutant (``resume``: only those its session has no result for); the
    seconds it took."""
    name, path = module["name"], ROOT / module["path"]
    cfg, session, log = out / f"{name}.toml", out / f"{name}.sqlite", out / f"{name}.log"
    fresh = not (resume and resumable(module, out))
    before = _digest(path)
    if fresh:
        session.unlink(missing_ok=True)
        (out / f"{name}.seconds.json").unlink(missing_ok=True)
        (out / f"{name}.source.sha256").write_text(before + "\n")
    start = time.monotonic()
    with log.open("a" if not fresh else "w") as fh:
        _baseline(module, fh, log)
        # a mutant that makes a loop endless is killed by the timeout: a few times the unmutated run
        took = time.monotonic() - start
        cfg.write_text(session_config(module, run, max(run["timeout_min"], run["timeout_factor"] * took)))
        for step in steps(cfg, session, fresh):
            subprocess.run(step, cwd=ROOT, stdout=fh, stderr=fh, check=True)
    if _digest(path) != before:
        raise SystemExit(f"mutation: {module['path']} was not restored; `git checkout -- {module['path']}`")
    return time.monotonic() - start


def retest_module(module: dict[str, Any], out: Path, equivalents: list[dict[str, Any]]) -> tuple[int, int, float]:
    """Run the surviving mutants of a module's session again with its current tests, except the listed
    equivalents and those in annotations; (retested, now killed, seconds). The session keeps each new result."""
    from cosmic_ray.mutating import mutate_and_test
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome

    name, path = module["name"], ROOT / module["path"]
    cfg, session, log = out / f"{name}.toml", out / f"{name}.sqlite", out / f"{name}.retest.log"
    if not session.exists() or not cfg.exists():
        raise SystemExit(f"mutation: no session of {name} in {out} to retest")
    timeout = float(tomllib.loads(cfg.read_text())["cosmic-ray"]["timeout"])
    before = _digest(path)
    start = time.monotonic()
    with log.open("w") as fh:
        _baseline(module, fh, log)
    killed = 0
    here = os.getcwd()
    os.chdir(ROOT)  # a session names its module relative to the repository root
    try:
        with use_db(str(session), WorkDB.Mode.open) as db:
            done = db.completed_work_items
            lines = path.read_text().splitlines()
            spans = annotation_spans("\n".join(lines) + "\n")

            def equivalent(item: Any, diff: str) -> bool:
                (row, col), m = item.mutations[0].start_pos, item.mutations[0]
                source = lines[row - 1].strip() if 0 < row <= len(lines) else ""
                found = equivalent_reason(module["path"], m.operator_name, source, col, diff, equivalents)
                return in_spans(row, col, spans) or found is not None

            survivors = [
                item
                for item, result in done
                if result.test_outcome == TestOutcome.SURVIVED and not equivalent(item, result.diff or "")
            ]
            for item in survivors:
                result = mutate_and_test(item.mutations, test_command(module["tests"]), timeout)
                db.set_result(item.job_id, result)
                killed += result.test_outcome != TestOutcome.SURVIVED
    finally:
        os.chdir(here)
    if _digest(path) != before:
        raise SystemExit(f"mutation: {module['path']} was not restored; `git checkout -- {module['path']}`")
    return len(survivors), killed, time.monotonic() - start


def _record_seconds(out: Path, name: str, took: float) -> None:
    """Add a run's seconds to the module's: a resumed run adds its time to that of the session's runs that finished
    (a stopped one records none)."""
    earlier = recorded_seconds(out, name) or 0.0
    (out / f"{name}.seconds.json").write_text(json.dumps({"seconds": round(earlier + took, 1)}) + "\n")


def uncommitted(paths: list[str]) -> str:
    """``git status --porcelain`` of these paths: empty when none has uncommitted changes."""
    status = subprocess.run(
        ["git", "status", "--porcelain", "--", *paths], cwd=ROOT, capture_output=True, text=True, check=False
    )
    return status.stdout.strip()


def _run_side_by_side(modules: list[dict[str, Any]], args: argparse.Namespace) -> bool:
    """``--jobs``: every module in the workers' copies; False (said on stderr) when one did not finish: its
    worker failed, or it has no session afterwards. The modules that finished are reported all the same."""
    extra = ["--resume"] * args.resume + ["--skip-missing-tests"] * args.skip_missing_tests
    names = [m["name"] for m in modules]
    try:
        outcomes = run_all(ROOT, names, args.out, args.jobs, extra)
    except WorkerSetupError as exc:
        print(f"mutation: {exc}", file=sys.stderr)
        return False
    ended = {o.name: o.returncode for o in outcomes}
    failed = [f"{o.name} (exit {o.returncode})" for o in outcomes if o.returncode]
    failed += [f"{n} (no session)" for n in names if ended.get(n) == 0 and not (args.out / f"{n}.sqlite").exists()]
    failed += [f"{n} (never started)" for n in names if n not in ended]
    if failed:
        print(f"mutation: did not finish: {', '.join(failed)}; see the logs in {args.out}", file=sys.stderr)
    return not failed


def head_commit() -> str | None:
    """The commit checked out, read when a run starts (commits made while it runs are not what it tested)."""
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    return head.stdout.strip() or None


def run_record(
    modules: list[dict[str, Any]], jobs: int, started: float, wall: float, commit: str | None, resumed: bool = False
) -> dict[str, Any]:
    """What ``run.json`` keeps of a whole run: when it started, on which commit, with how many jobs, how long."""
    return {
        "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(started)),
        "commit": commit,
        "jobs": jobs,
        "modules": [m["name"] for m in modules],
        "wall_seconds": round(wall, 1),
        "resumed": resumed,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mutation.run", description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", default=None, help="module names (mutation/modules.toml)")
    parser.add_argument("--out", type=Path, default=ROOT / ".mutation")
    parser.add_argument("--report-only", action="store_true", help="rewrite the report from the sessions there")
    parser.add_argument(
        "--retest", action="store_true", help="run only the surviving mutants of the sessions there again"
    )
    parser.add_argument(
        "--resume", action="store_true", help="keep each module's session and run only its mutants without a result"
    )
    parser.add_argument(
        "--skip-missing-tests", action="store_true", help="drop mapped test files that do not exist (an older tree)"
    )
    parser.add_argument("--jobs", type=int, default=1, help="modules run side by side, each in a copy of the tree")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)  # one of --jobs' copies
    args = parser.parse_args(argv)
    args.out = args.out.resolve()  # the workers of --jobs run in copies elsewhere
    if args.resume and (args.retest or args.report_only):
        print("mutation: --resume cannot go with --retest or --report-only", file=sys.stderr)
        return 2
    if args.jobs < 1 or (args.jobs > 1 and (args.retest or args.report_only)):
        print("mutation: --jobs takes a number from 1 and goes with a full run or --resume", file=sys.stderr)
        return 2
    config = load()
    run, equivalents = config.get("run", {}), config.get("equivalent", [])
    modules = config["module"]
    if args.only:
        unknown = set(args.only) - {m["name"] for m in modules}
        if unknown:
            print(f"mutation: unknown module(s): {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        modules = [m for m in modules if m["name"] in args.only]
    for m in modules:
        absent = [t for t in m["tests"] if not (ROOT / t).exists()]
        if absent and not args.skip_missing_tests:
            print(f"mutation: {m['name']}: no such test file(s): {', '.join(absent)}", file=sys.stderr)
            return 2
        m["tests"] = [t for t in m["tests"] if t not in absent]
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.report_only and not args.worker:  # a worker's copy was made from a tree checked here
        changed = uncommitted([m["path"] for m in modules])
        if changed:
            print(f"mutation: commit or stash these first (they are mutated in place):\n{changed}", file=sys.stderr)
            return 2
    unfinished = False
    if args.retest:
        for m in modules:
            print(f"mutation: {m['path']} ...", file=sys.stderr, flush=True)
            n, killed, took = retest_module(m, args.out, equivalents)
            print(f"mutation: {m['name']}: {killed} of {n} survivors now killed ({took:.0f} s)", file=sys.stderr)
    elif not args.report_only:
        started, wall, commit = time.time(), time.monotonic(), head_commit()
        if args.jobs > 1:
            unfinished = not _run_side_by_side(modules, args)
        else:
            for m in modules:
                print(f"mutation: {m['path']} ...", file=sys.stderr, flush=True)
                _record_seconds(args.out, m["name"], run_module(m, run, args.out, resume=args.resume))
        if args.worker:
            return 0  # the run that started the worker writes the report
        if not unfinished and not args.only:  # the record of a whole run: `make mutation` of every module
            record = run_record(modules, args.jobs, started, time.monotonic() - wall, commit, args.resume)
            (args.out / "run.json").write_text(json.dumps(record, indent=1) + "\n")
    scores = []
    for m in modules:
        session = args.out / f"{m['name']}.sqlite"
        if not session.exists():
            continue
        lines = (ROOT / m["path"]).read_text().splitlines()
        mutants = read_session(session, m["path"], lines, equivalents, run.get("skip", []))
        scores.append(ModuleScore(m["name"], m["path"], recorded_seconds(args.out, m["name"]) or 0.0, mutants))
    stale = stale_equivalents(scores, equivalents)
    recorded = args.out / "run.json"
    last = json.loads(recorded.read_text()) if recorded.exists() else None
    text = markdown(scores, stale, TOOL, last)
    (args.out / "report.md").write_text(text)
    (args.out / "report.json").write_text(as_json(scores, stale))
    print(text.split("\n## ")[0])
    print(f"mutation: report in {args.out / 'report.md'}", file=sys.stderr)
    if unfinished:
        return 2
    return 1 if any(s.count("survived") or s.count("error") for s in scores) else 0


if __name__ == "__main__":
    sys.exit(main())
