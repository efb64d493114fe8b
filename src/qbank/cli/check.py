"""``qbank check``: load, validate and cross-check all content."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from .common import TRUST_HELP, UsageError, emit, repo_root, trust_local

if TYPE_CHECKING:
    from .common import Subparsers


def register(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add ``check`` to the subcommands."""
    p = sub.add_parser("check", parents=[common], help="validate and cross-check all content")
    p.add_argument("paths", nargs="*", help="only report problems of these files (all content is still loaded)")
    p.add_argument("--no-verify", action="store_true", help="do not run stale scripts; bind against existing records")
    p.add_argument("--trust-local", action="store_true", help=TRUST_HELP)
    p.set_defaults(func=cmd_check)


def cmd_check(args: argparse.Namespace) -> int:
    """Load, validate and cross-check all content; report problems in the named files only, if any."""
    from ..pipeline import check_all

    root = repo_root(args)
    # numbers in prose are claims: scripts run first (cached), then every number must bind
    _corpus, report = check_all(root, verify=not args.no_verify, trust_local=trust_local(args))
    if args.paths:
        wanted = {_rel_to(root, p) for p in args.paths}
        slugs = {Path(w).stem for w in wanted}
        report.problems = [p for p in report.problems if p.path in wanted or Path(p.path).stem in slugs]
    return emit(report, args)


def _rel_to(root: Path, path: str) -> str:
    p = Path(path).resolve()
    try:
        return p.relative_to(root).as_posix()
    except ValueError as exc:
        raise UsageError(f"{path} is outside the repository {root}") from exc
