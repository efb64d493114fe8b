"""``qbank verify``: find stale scripts, run them in parallel in the sandbox, store and report results."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..problems import Level, Problem, Report, error
from . import cache, store, warm
from .options import RunOptions
from .outcomes import problem_from_json
from .version import API_VERSION

if TYPE_CHECKING:
    from concurrent.futures import Future

    from .outcomes import Verdict
    from .runner import RawRun

DEFAULT_TIMEOUT = 120
GPU_HINT = re.compile(r"cuda|kernel_check|triton_check")
STRICT_CODES = {"verify-frozen-stale", "verify-needs-gpu"}


class VerifyUsageError(ValueError):
    """A request ``qbank verify`` cannot act on (unknown slug, no GPU for ``--device cuda``)."""


@dataclass
class VerifyConfig:
    """What to verify and how."""

    slugs: list[str] = field(default_factory=list)
    jobs: int = 0
    """0: one per core."""
    device: str = "auto"
    force: bool = False
    shard: tuple[int, int] | None = None
    plan: dict[str, Any] | None = None
    """The shard plan (``--plan``) every shard of a CI run shares; None: plan here from the cache index."""
    strict: bool = False
    options: RunOptions = field(default_factory=RunOptions)


@dataclass
class VerifyRun:
    """Results in slug order, the problems, and the stored entries of the scripts that ran."""

    results: list[dict[str, Any]]
    report: Report
    entries: dict[str, dict[str, Any]]
    device: str

    @property
    def ran(self) -> int:
        """How many scripts executed."""
        return sum(1 for r in self.results if r["cache"] == "miss")


def discover(root: Path) -> dict[str, str]:
    """Slug -> script path for ``verify/<slug>.py`` (``_`` folders and files are shared code, not scripts)."""
    base = root / "verify"
    return {name[:-3]: f"{base}{os.sep}{name}" for name in warm.script_names(str(base))}


def resolve_device(want: str, fake_cuda: str | None) -> str:
    """cpu or cuda; ``auto`` picks cuda when an NVIDIA driver and a CUDA build of torch are present."""
    device = warm.pick_device(want, fake_cuda, cache.torch_version())
    if device is None:
        raise VerifyUsageError("--device cuda: no GPU here (no NVIDIA driver or a CPU-only torch)")
    return device


def question_timeout(root: Path, slug: str) -> int:
    """``verify.timeout`` of ``questions/<slug>.yaml`` (the default when the file is missing or invalid)."""
    from ..model import Question
    from ..sources import load_model

    path = root / "questions" / f"{slug}.yaml"
    if not path.exists():
        return DEFAULT_TIMEOUT
    question, _located, _problems = load_model(path, f"questions/{slug}.yaml", Question)
    return question.verify.timeout if question is not None else DEFAULT_TIMEOUT


def _now() -> str:
    import datetime as dt  # only when a script ran

    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


ROW_VERSION = 2
KERNEL_FIELDS = ("kind", "path", "device_name", "expect_mismatch", "timing")
"""What a result keeps of a Triton kernel's record entry (the page says where it ran and, on CUDA, how fast)."""


def _old_inputs(row: dict[str, Any], rel: str) -> dict[str, Any]:
    """The inputs an index row was computed from (hashes come from its stats)."""
    stats, fz = row["stats"], row.get("frozen")
    api, torch, device, *rest = row["env"]
    return {
        "script": stats.get(rel, [0, 0, None])[2],
        "deps": {d: stats.get(d, [0, 0, None])[2] for d in row["deps"]},
        "api": api,
        "torch": torch,
        "device": device,
        "wall": rest[0] if rest else None,
        "frozen": stats.get(fz, [0, 0, None])[2] if fz else None,
    }


def _current_inputs(row: dict[str, Any], hasher: cache.Hasher, rel: str, env: list[Any]) -> dict[str, Any]:
    stats, fz = row["stats"], row.get("frozen")
    api, torch, device, wall = env
    return {
        "script": hasher.sha(rel, stats.get(rel)),
        "deps": {d: hasher.sha(d, stats.get(d)) for d in row["deps"]},
        "api": api,
        "torch": torch,
        "device": device,
        "wall": wall,
        "frozen": hasher.sha(fz, stats.get(fz)) if fz else None,
    }


def _kill_until_done(futures: list[Any], kill_all: Callable[[], None], limit_s: float = 30.0) -> None:
    """Kill every running script until no worker is still running one. A single kill can miss a script a worker
    was starting at that moment; its worker would then wait for it, and the interpreter waits for its workers
    at exit, so an interrupted ``qbank verify`` would outlive ^C by the script's whole run."""
    import time

    deadline = time.monotonic() + limit_s
    while True:
        kill_all()
        if all(f.done() for f in futures) or time.monotonic() > deadline:
            return
        time.sleep(0.05)


def verify(root: Path, config: VerifyConfig, log: Callable[[str], None] | None = None) -> VerifyRun:
    """Run every stale script (or the named ones), reuse cached results for the rest; library code, no printing."""
    root = root.resolve()
    device = resolve_device(config.device, config.options.fake_cuda)
    scripts = discover(root)
    unknown = [s for s in config.slugs if s not in scripts]
    if unknown:
        raise VerifyUsageError(f"no verification script for: {', '.join(unknown)}")
    index = store.read_index(root)
    selected = config.slugs or list(scripts)
    if config.shard is not None:  # balanced by recorded run time (verify/shards), then the named ones of it
        from .shards.plan import PlanError, select

        try:
            mine = set(select(list(scripts), config.shard, index.durations(), config.plan))
        except PlanError as exc:
            raise VerifyUsageError(str(exc)) from exc
        selected = [s for s in selected if s in mine]
    jobs = config.jobs or len(os.sched_getaffinity(0))
    options = dataclasses.replace(
        config.options, device=device, threads=max(1, len(os.sched_getaffinity(0)) // max(1, jobs))
    )
    hasher = cache.Hasher(root)
    torch = cache.runtime_version()

    results: dict[str, dict[str, Any]] = {}
    todo: list[tuple[str, str]] = []
    # the environment a result is tied to; a sandboxed result also serves a --trust-local run, never the reverse
    env = [API_VERSION, torch, device, warm.wall(options.trust_local)]
    good_envs = {i for i, recorded in enumerate(index.envs) if warm.serves(recorded, env)}
    restored = False
    for slug in selected:
        rel = f"verify/{slug}.py"
        compact = None if config.force else index.rows.get(slug)
        if (
            compact is not None
            and compact[0] in good_envs
            and compact[2]["outcome"] != "timeout"
            and hasher.unchanged(compact[1])
        ):  # the warm path: same environment, every file as hashed last time
            if hasher.changed and hasher.changed.intersection(compact[1]):  # touched, not changed
                compact[1] = hasher.stats(list(compact[1]))
            results[slug] = {**compact[2], "slug": slug, "cache": "hit", "reason": None}
            continue
        row = index.row(slug)
        if row is None:
            # the index is an accelerator; entries are the truth (a malformed one is no result: the script re-runs)
            row = store.entry_row(store.read_entry(root, slug), ROW_VERSION)
        if row is None or config.force:
            todo.append((slug, "forced (--force)" if config.force else "no cached result"))
            continue
        result = row["result"]
        if warm.serves(row["env"], env) and result["outcome"] != "timeout" and hasher.unchanged(row["stats"]):
            # an entry's row (no index): the same warm check, and the row goes back into the index
            index.put(slug, {**row, "stats": hasher.stats(list(row["stats"]))})
            restored = True
            results[slug] = {**result, "slug": slug, "cache": "hit", "reason": None}
            continue
        new = _current_inputs(row, hasher, rel, env)
        why = cache.reasons(_old_inputs(row, rel), new, rel)
        if not why and result["outcome"] == "timeout":
            t = question_timeout(root, slug)
            if t != result.get("timeout"):
                why = [f"timeout {result.get('timeout')} s -> {t} s"]
        if why:
            todo.append((slug, ", ".join(why)))
        else:
            index.put(slug, {**row, "stats": hasher.stats(list(row["stats"]))})
            restored = True
            results[slug] = {**result, "slug": slug, "cache": "hit", "reason": None}

    entries: dict[str, dict[str, Any]] = {}
    if todo and not options.trust_local:
        from .sandbox import probe

        missing = probe.missing()
        if missing is not None:  # fail closed: nothing runs, nothing is stored, every script says why
            for slug, _reason in todo:
                results[slug] = no_sandbox_result(slug, missing)
            todo = []
    if todo:
        # imported here: a warm run (nothing to execute) needs none of this
        import threading
        from concurrent.futures import ThreadPoolExecutor, as_completed

        from .runner import kill_all, run_script

        gpu_lock = threading.Lock()

        def work(slug: str) -> tuple[RawRun, int, Refusal | None]:
            path = Path(scripts[slug])
            timeout = question_timeout(root, slug)
            if options.static_check:  # the static check gates every run: a refused script never starts
                refusal = static_check(root, slug)
                if refusal is not None:
                    return refused_run(), timeout, refusal
            if device == "cuda" and GPU_HINT.search(path.read_text(encoding="utf-8", errors="replace")):
                with gpu_lock:  # one CUDA script at a time: they would fight over one GPU's memory
                    return run_script(root, path, timeout, options), timeout, None
            return run_script(root, path, timeout, options), timeout, None

        reasons = dict(todo)
        pool = ThreadPoolExecutor(max_workers=max(1, jobs))
        futures: dict[Future[tuple[RawRun, int, Refusal | None]], str] = {pool.submit(work, s): s for s, _ in todo}
        try:
            for fut in as_completed(futures):
                slug = futures[fut]
                raw, timeout, refusal = fut.result()
                entry = _finish(root, slug, raw, timeout, options, hasher, torch, refusal)
                store.write_entry(root, entry)
                entries[slug] = entry
                index.put(slug, entry["index"])
                results[slug] = {**entry["result"], "cache": "miss", "reason": reasons[slug]}
                if log:
                    log(f"{entry['result']['outcome']:9} {slug} ({reasons[slug]})")
        except BaseException:
            # ^C or an internal error: queued scripts never start, running ones are killed
            pool.shutdown(wait=False, cancel_futures=True)
            _kill_until_done(list(futures), kill_all)
            raise
        pool.shutdown()
    gone = [slug for slug in index.rows if slug not in scripts]
    for slug in gone:  # the script was deleted: so are its results
        del index.rows[slug]
        store.remove_entry(root, slug)
    if todo or gone or restored or hasher.hashed:
        store.write_index(root, index)
    ordered = [results[s] for s in selected]
    return VerifyRun(ordered, build_report(ordered, config.strict), entries, device)


def no_sandbox_result(slug: str, why: str) -> dict[str, Any]:
    """The result of a script that was not run because the wall is missing (never cached)."""
    from .outcomes import problem_json
    from .sandbox.probe import HOW_TO_FIX

    msg = f"not run: no sandbox: {why}; {HOW_TO_FIX}"
    return {
        "slug": slug, "outcome": "error", "duration": 0.0, "device": "cpu", "claims": 0, "checks": 0,
        "message": msg, "problems": [problem_json(error(f"verify/{slug}.py", 0, 0, "verify-no-sandbox", msg))],
        "kernels": [], "ran_at": _now(), "timeout": 0, "cache": "miss", "reason": "no sandbox",
    }


def entries_for(root: Path, run: VerifyRun) -> dict[str, dict[str, Any]]:
    """Stored entries of every script in the run (ran or cached), for a shard report that ``merge`` imports."""
    out = dict(run.entries)
    for r in run.results:
        if r["slug"] not in out:
            entry = store.read_entry(root, r["slug"])
            if entry is not None:
                out[r["slug"]] = entry
    return out


def build_report(results: list[dict[str, Any]], strict: bool) -> Report:
    """The problems of these results; under ``strict`` a stale or missing frozen GPU result is an error."""
    report = Report(files=len(results))
    for r in results:
        probs: list[Problem] = []
        for d in r.get("problems", []):
            p = problem_from_json(d)
            if strict and p.code in STRICT_CODES:
                p = dataclasses.replace(p, level=Level.ERROR)
            probs.append(p)
        report.extend(probs)
    return report


@dataclass
class Refusal:
    """A script the static check refused: its problems and the files it read (script and ``verify/_lib``)."""

    problems: list[Problem]
    files: list[str]


def static_check(root: Path, slug: str) -> Refusal | None:
    """The static check of ``verify/<slug>.py`` and the ``verify/_lib`` modules it imports (None: it passed)."""
    from .lint import lint_script

    found, files = lint_script(root, f"verify/{slug}.py")
    return Refusal(found, files) if found else None


def refused_run() -> RawRun:
    """The RawRun of a script that never started."""
    from .runner import RawRun

    return RawRun(None, False, 0.0, None, None, "", "", "", 0, 0)


def _verdict(root: Path, rel: str, raw: RawRun, timeout: int, options: RunOptions, refusal: Refusal | None) -> Verdict:
    """Classify a run (the record re-checked against the script's declaring lines), or a refusal."""
    from .lint import declaration_lines, local_modules
    from .outcomes import Verdict, classify

    if refusal is not None:
        n = len(refusal.problems)
        msg = f"not run: the static check found {n} forbidden construct{'' if n == 1 else 's'}"
        return Verdict("error", list(refusal.problems), message=msg)
    script_abs = str((root / rel).resolve())
    try:
        declared: set[int] | None = declaration_lines((root / rel).read_text(encoding="utf-8"), local_modules(root))
    except (OSError, UnicodeDecodeError):
        declared = set()
    return classify(raw, rel, script_abs, timeout, options, declared)


def _finish(
    root: Path,
    slug: str,
    raw: RawRun,
    timeout: int,
    options: RunOptions,
    hasher: cache.Hasher,
    torch: str,
    refusal: Refusal | None = None,
) -> dict[str, Any]:
    """Classify a run, hash what it read, apply or write frozen GPU results, export the derivation."""
    from . import frozen
    from .kernels.figures import gpu_figures, triton_kernels
    from .notebook import derivation
    from .outcomes import any_needs_gpu, problem_json

    rel = f"verify/{slug}.py"
    verdict = _verdict(root, rel, raw, timeout, options, refusal)
    status = raw.status or {}
    record = raw.record or {}
    if verdict.outcome == "error" and any(p.code == "verify-record-forged" for p in verdict.problems):
        record = {}  # a forged record binds no claims and freezes no kernels
    hasher.fresh.pop(rel, None)
    dep_rels = [d for d in (refusal.files if refusal else status.get("deps", [])) if d != rel]
    for d in dep_rels:
        hasher.fresh.pop(d, None)
    script_sha = hasher.sha(rel)
    deps = {d: hasher.sha(d) for d in dep_rels}
    ihash = cache.input_hash(script_sha, deps, API_VERSION)
    when = _now()
    host_stamp = {"device": options.device, "torch": torch}
    kernels = [
        {
            "name": k["name"],
            "line": k.get("line", 0),
            "ok": k.get("ok"),
            "device": k.get("device"),
            "ran_at": when,
            "stamp": status.get("stamp") if k.get("device") == "cuda" else host_stamp,
            "frozen": False,
            **{f: k[f] for f in KERNEL_FIELDS if f in k},
        }
        for k in record.get("kernels", [])
        if not k.get("needs_gpu")
    ]
    frozen_path: str | None = None
    frozen_written = None
    problems = list(verdict.problems)
    outcome = verdict.outcome
    if options.device == "cuda" and any(k.get("device") == "cuda" for k in record.get("kernels", [])):
        stamp = status.get("stamp") or {}
        try:
            key_path = os.environ.get(frozen.SIGNING_ENV)
            frozen_written = frozen.freeze(root, slug, ihash, stamp, record.get("kernels", []), when, key_path)
        except frozen.FreezeError as exc:
            problems.append(error(rel, 0, 0, "verify-frozen-no-key", f"not frozen: {exc}"))
            outcome = "error"
    elif any_needs_gpu(record):
        frozen_path = frozen.frozen_rel(slug)
        hasher.fresh.pop(frozen_path, None)
        fz_outcome, fz_problems, stamps = frozen.resolve(root, slug, rel, record, ihash)
        problems += fz_problems
        kernels += stamps
        if fz_outcome == "error" or (fz_outcome and outcome == "pass"):
            outcome = fz_outcome
    if options.device != "cuda" and triton_kernels(record):
        # Triton kernels ran through the interpreter here; a signed GPU run of the same inputs adds its figures
        frozen_path = frozen.frozen_rel(slug)
        hasher.fresh.pop(frozen_path, None)
        gpu_problems, figures = gpu_figures(root, slug, rel, record, ihash)
        problems += gpu_problems
        for k in kernels:
            if k["name"] in figures and not k.get("frozen"):
                k["gpu"] = figures[k["name"]]
        if any(p.level == Level.ERROR for p in gpu_problems) and outcome == "pass":
            outcome = "error" if any(p.code.startswith("verify-frozen") for p in gpu_problems) else "fail"
    inputs = {
        "script": script_sha,
        "deps": deps,
        "api": API_VERSION,
        "torch": torch,
        "device": options.device,
        "wall": warm.wall(options.trust_local),
        "frozen": hasher.sha(frozen_path) if frozen_path else None,
        "frozen_path": frozen_path,
        "input_hash": ihash,
    }
    result = {
        "slug": slug,
        "outcome": outcome,
        "duration": round(raw.duration, 3),
        "device": options.device,
        "claims": verdict.claims,
        "checks": verdict.checks,
        "message": verdict.message,
        # a line without a known column points at its start; line 0 means the whole script
        "problems": [problem_json(dataclasses.replace(p, col=p.col or (1 if p.line else 0))) for p in problems],
        "kernels": kernels,
        "ran_at": when,
        "timeout": timeout,
        "sandbox": status.get("sandbox"),
        "frozen_written": frozen_written,
    }
    cells = status.get("cells") or []
    md = derivation(cells, slug) if cells else None
    stats = hasher.stats([rel, *deps, *([frozen_path] if frozen_path else [])])
    # the index keeps what a warm run needs and reports, compactly: hashes live only in the stats;
    # kernels, sandbox details, the record and the derivation stay in the entry
    brief = {k: v for k, v in result.items() if k not in {"slug", "kernels", "sandbox", "frozen_written"}}
    row = {
        "v": ROW_VERSION,
        "env": [API_VERSION, torch, options.device, warm.wall(options.trust_local)],
        "deps": sorted(deps),
        "frozen": frozen_path,
        "stats": stats,
        "result": brief,
    }
    return {
        "slug": slug,
        "key": cache.cache_key(inputs),
        "inputs": inputs,
        "input_hash": ihash,
        "index": row,
        "result": result,
        "record": record,
        "derivation": md,
    }


def merge(root: Path, bundles: list[dict[str, Any]], strict: bool = False) -> VerifyRun:
    """Import the entries of shard reports (``--report-json``) into this cache; report on all of them.

    The shards must cover every script of this repository exactly once: a script no shard reported (a lost
    shard job, a plan for another commit) or one two shards reported is an error, not a silent gap."""
    root = root.resolve()
    index = store.read_index(root)
    entries: dict[str, dict[str, Any]] = {}
    for bundle in bundles:
        for slug, entry in (bundle.get("entries") or {}).items():
            store.write_entry(root, entry)
            index.put(slug, entry["index"])
            entries[slug] = entry
    store.write_index(root, index)
    results = []
    for bundle in bundles:
        results += bundle.get("results", [])
    results.sort(key=lambda r: r["slug"])
    device = bundles[0].get("device", "cpu") if bundles else "cpu"
    report = build_report(results, strict)
    report.extend(coverage_problems([r["slug"] for r in results], list(discover(root))))
    return VerifyRun(results, report, entries, device)


def coverage_problems(reported: list[str], scripts: list[str]) -> list[Problem]:
    """Scripts that no shard report holds, or that more than one holds."""
    from collections import Counter

    seen = Counter(reported)
    out = [
        error(f"verify/{s}.py", 0, 0, "verify-shard-missing", "no shard report holds this script's result")
        for s in scripts
        if s not in seen
    ]
    out += [
        error(f"verify/{s}.py", 0, 0, "verify-shard-twice", f"{n} shard reports hold this script's result")
        for s, n in sorted(seen.items())
        if n > 1
    ]
    return out
