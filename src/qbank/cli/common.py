"""What every command shares: exit codes, usage errors, the common options, printing a report."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from ..problems import FORMATS, Report, render

if TYPE_CHECKING:
    import datetime as dt

    Subparsers: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]

EXIT_OK, EXIT_CONTENT, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3

TRUST_HELP = "run scripts WITHOUT the sandbox (your own scripts, your own machine; refused under CI=true)"


class UsageError(Exception):
    """A command line that cannot be acted on (exit 2)."""


def default_format() -> str:
    """``github`` inside GitHub Actions, ``text`` elsewhere."""
    return "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"


def common_parser() -> argparse.ArgumentParser:
    """The options every command takes (a parent parser: ``--root``, ``--format``, ``--strict``, ``-v``)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--root", default=".", help="repository root (default: current folder)")
    common.add_argument("--format", choices=FORMATS, default=default_format(), help="problem output format")
    common.add_argument("--strict", action="store_true", help="warnings fail the run")
    common.add_argument("-v", "--verbose", action="store_true", help="show tracebacks on internal errors")
    return common


def emit(report: Report, args: argparse.Namespace) -> int:
    """Print a report in the chosen format and return the exit code it implies."""
    out = render(report, args.format)
    # machine-readable output and a clean summary go to stdout; problems (and their summary) to stderr
    stream = sys.stdout if args.format == "json" or not report.problems else sys.stderr
    stream.write(out)
    return EXIT_CONTENT if report.failed(strict=getattr(args, "strict", False)) else EXIT_OK


def repo_root(args: argparse.Namespace) -> Path:
    """``--root`` resolved; a folder without ``questions/`` is a usage error."""
    root = Path(args.root).resolve()
    if not (root / "questions").is_dir():
        raise UsageError(f"{root} has no questions/ folder; run qbank in the repository root or pass --root")
    return root


def parse_date(text: str) -> dt.date:
    """A ``YYYY-MM-DD`` option value; anything else is a usage error."""
    import datetime as dt  # here, not at the top: building the parser needs no date

    try:
        return dt.date.fromisoformat(text)
    except ValueError as exc:
        raise UsageError(f"{text!r} is not a date (YYYY-MM-DD)") from exc


def trust_local(args: argparse.Namespace) -> bool:
    """``--trust-local``: refused under CI=true; said loudly on stderr otherwise."""
    if not getattr(args, "trust_local", False):
        return False
    if os.environ.get("CI", "").lower() == "true":
        raise UsageError("--trust-local is refused under CI=true: scripts from pull requests always run sandboxed")
    print(
        "qbank: WARNING: --trust-local: verification scripts run WITHOUT the bubblewrap sandbox "
        "(only the in-process layers); use it only for your own scripts on your own machine",
        file=sys.stderr,
        flush=True,
    )
    return True
