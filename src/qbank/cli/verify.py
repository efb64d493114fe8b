"""``qbank verify``: run stale verification scripts in the sandbox; shard plans (``--write-plan``) and merging
shard reports (``--merge``)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import EXIT_CONTENT, EXIT_OK, TRUST_HELP, UsageError, emit, repo_root, trust_local

if TYPE_CHECKING:
    from .common import Subparsers


def register(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add ``verify`` to the subcommands."""
    p = sub.add_parser("verify", parents=[common], help="run stale verification scripts in the sandbox")
    p.add_argument("slugs", nargs="*", metavar="SLUG", help="only these scripts (default: all)")
    p.add_argument("--jobs", "-j", type=int, default=0, help="scripts run at once (default: one per core)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="device for kernel checks")
    p.add_argument("--force", action="store_true", help="run even when a cached result holds")
    p.add_argument("--shard", type=_shard, default=None, metavar="K/N",
                   help="run only shard K of N (balanced by recorded run time; docs/scale.md)")
    p.add_argument("--plan", metavar="FILE", help="with --shard: the shards of this plan (--write-plan)")
    p.add_argument("--write-plan", metavar="FILE",
                   help="write the shard plan of every script and exit (N: --shards, or pyproject's "
                        "[tool.qbank] verify-shards)")
    p.add_argument("--shards", type=int, choices=range(1, 257), default=None, metavar="N",
                   help="with --write-plan: the shard count")
    p.add_argument("--merge", nargs="+", metavar="REPORT", help="merge shard reports (--report-json) instead")
    p.add_argument("--report-json", metavar="PATH", help="write the JSON report (with entries, for --merge)")
    p.add_argument("--report-md", metavar="PATH", help="write the Markdown table")
    p.add_argument("--network", choices=("auto", "namespace", "socket"), default="auto", help=argparse.SUPPRESS)
    p.add_argument("--fs", choices=("auto", "mount", "audit"), default="auto", help=argparse.SUPPRESS)
    p.add_argument("--mem-limit", type=float, default=4.0, metavar="GiB", help="address-space limit per script")
    p.add_argument("--trust-local", action="store_true", help=TRUST_HELP)
    p.set_defaults(func=cmd_verify)


def _shard(text: str) -> tuple[int, int]:
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: expected K/N, e.g. 1/4") from exc
    if not 1 <= k <= n:
        raise argparse.ArgumentTypeError(f"{text!r}: K must be between 1 and N")
    return k, n


def cmd_verify(args: argparse.Namespace) -> int:
    """Run stale verification scripts in the sandbox (or merge shard reports) and report the outcomes."""
    import json

    from ..verify import engine, report
    from ..verify.options import RunOptions

    root = repo_root(args)
    if args.write_plan:
        return _write_plan(root, args)
    if args.merge:
        bundles = [json.loads(Path(p).read_text(encoding="utf-8")) for p in args.merge]
        run = engine.merge(root, bundles, strict=args.strict)
    else:
        options = RunOptions(
            trust_local=trust_local(args),
            network=args.network,
            fs=args.fs,
            mem_bytes=int(args.mem_limit * (1 << 30)) if args.mem_limit else None,
            fake_cuda=os.environ.get("QBANK_FAKE_CUDA") or None,
        )
        config = engine.VerifyConfig(
            slugs=args.slugs,
            jobs=args.jobs,
            device=args.device,
            force=args.force,
            shard=args.shard,
            plan=_read_plan(args),
            strict=args.strict,
            options=options,
        )
        log = None if args.format == "json" else (lambda line: print(line, flush=True))
        try:
            run = engine.verify(root, config, log=log)
        except engine.VerifyUsageError as exc:
            raise UsageError(str(exc)) from exc
    if args.report_json:
        run.entries = engine.entries_for(root, run)
        Path(args.report_json).write_text(json.dumps(report.to_json(run)), encoding="utf-8")
    if args.report_md or os.environ.get("GITHUB_STEP_SUMMARY"):
        md = report.markdown(run)
        if args.report_md:
            Path(args.report_md).write_text(md, encoding="utf-8")
        report.append_step_summary(md)
    if args.format == "json":
        print(json.dumps(report.to_json(run, with_entries=False), indent=2))
        return EXIT_CONTENT if run.report.failed(strict=args.strict) else EXIT_OK
    counts: dict[str, int] = {}
    for r in run.results:
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
    outcomes = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "nothing to verify"
    print(f"{len(run.results)} scripts: {run.ran} ran, {len(run.results) - run.ran} cached ({outcomes})", flush=True)
    return emit(run.report, args)


def _read_plan(args: argparse.Namespace) -> dict[str, Any] | None:
    """``--plan FILE`` (only with ``--shard``)."""
    if args.plan is None:
        return None
    if args.shard is None:
        raise UsageError("--plan needs --shard K/N")
    from ..verify.shards.plan import PlanError, read_plan

    try:
        return read_plan(Path(args.plan))
    except PlanError as exc:
        raise UsageError(str(exc)) from exc


def _write_plan(root: Path, args: argparse.Namespace) -> int:
    """``--write-plan FILE``: every script into N shards by recorded run time (N: ``--shards`` or
    ``[tool.qbank] verify-shards``); nothing runs."""
    import json

    from ..verify import store
    from ..verify.engine import discover
    from ..verify.shards.plan import PlanError, describe, make_plan, shard_count

    if args.shard or args.merge or args.slugs:
        raise UsageError("--write-plan plans every script: no SLUG, --shard or --merge with it")
    try:
        n = args.shards or shard_count(root)
    except PlanError as exc:
        raise UsageError(str(exc)) from exc
    plan = make_plan(list(discover(root)), store.read_index(root).durations(), n)
    Path(args.write_plan).write_text(json.dumps(plan, indent=1) + "\n", encoding="utf-8")
    print(describe(plan))
    return EXIT_OK
