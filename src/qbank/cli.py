"""The command line: the only place that prints and picks exit codes.

Exit codes: 0 clean, 1 content errors (or warnings under ``--strict``), 2 usage, 3 internal error.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from .problems import FORMATS, Report, render

EXIT_OK, EXIT_CONTENT, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class UsageError(Exception):
    """A command line that cannot be acted on (exit 2)."""


def default_format() -> str:
    """``github`` inside GitHub Actions, ``text`` elsewhere."""
    return "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"


def emit(report: Report, args: argparse.Namespace) -> int:
    """Print a report in the chosen format and return the exit code it implies."""
    out = render(report, args.format)
    # machine-readable output and a clean summary go to stdout; problems (and their summary) to stderr
    stream = sys.stdout if args.format == "json" or not report.problems else sys.stderr
    stream.write(out)
    return EXIT_CONTENT if report.failed(strict=getattr(args, "strict", False)) else EXIT_OK


def _root(args: argparse.Namespace) -> Path:
    root = Path(args.root).resolve()
    if not (root / "questions").is_dir():
        raise UsageError(f"{root} has no questions/ folder; run qbank in the repository root or pass --root")
    return root


def cmd_check(args: argparse.Namespace) -> int:
    """Load, validate and cross-check all content; report problems in the named files only, if any."""
    from .corpus import load_corpus

    root = _root(args)
    _corpus, report = load_corpus(root)
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


def cmd_schema(args: argparse.Namespace) -> int:
    """Write JSON Schemas for the YAML files (editors pick them up via the files' modeline)."""
    from .schema import write_schemas

    root = Path(args.root).resolve()
    out = root / args.out
    written = write_schemas(out)
    for path in written:
        print(path.relative_to(root).as_posix())
    return EXIT_OK


def cmd_build(args: argparse.Namespace) -> int:
    """Check, then build the site into ``site/`` (replaced whole, or left as it was on failure)."""
    from .build import build_site

    root = _root(args)
    result = build_site(root, Path(args.site_dir).resolve() if args.site_dir else None, links=not args.no_links)
    code = emit(result.report, args)
    if result.site_dir is not None and args.format != "json":
        print(f"built {result.site_dir.relative_to(root) if result.site_dir.is_relative_to(root) else result.site_dir}")
    return code if result.site_dir is not None or code else EXIT_CONTENT


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--root", default=".", help="repository root (default: current folder)")
    common.add_argument("--format", choices=FORMATS, default=default_format(), help="problem output format")
    common.add_argument("--strict", action="store_true", help="warnings fail the run")
    common.add_argument("-v", "--verbose", action="store_true", help="show tracebacks on internal errors")

    parser = argparse.ArgumentParser(prog="qbank", description="Check, verify and build the question bank.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("check", parents=[common], help="validate and cross-check all content")
    p.add_argument("paths", nargs="*", help="only report problems of these files (all content is still loaded)")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("schema", parents=[common], help="write JSON Schemas for the YAML files")
    p.add_argument("--out", default="schemas", help="folder for the schema files (default: schemas)")
    p.set_defaults(func=cmd_schema)

    p = sub.add_parser("build", parents=[common], help="check, then build the site into site/")
    p.add_argument("--site-dir", default=None, help="output folder (default: site/)")
    p.add_argument("--no-links", action="store_true", help="skip linkchecker over the built site (other checks run)")
    p.set_defaults(func=cmd_build)

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``qbank`` console script."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    try:
        code: int = args.func(args)
        return code
    except UsageError as exc:
        sys.stderr.write(f"qbank: error: {exc}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("qbank: interrupted\n")
        return 130
    except Exception as exc:
        if getattr(args, "verbose", False):
            traceback.print_exc()
        else:
            sys.stderr.write(f"qbank: internal error: {type(exc).__name__}: {exc} (run with -v for a traceback)\n")
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
