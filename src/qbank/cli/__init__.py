"""The command line: the only place that prints and picks exit codes (with ``qbank.entry``, the console script's
front door, which prints the answer of a warm no-op ``qbank verify`` and hands every other command line here).

Exit codes: 0 clean, 1 content errors (or warnings under ``--strict``), 2 usage, 3 internal error.

One module per command (``check``, ``schema``, ``new``, ``claims``, ``build``, ``verify``, ``gpu``, ``deploy``,
``serve``, ``license``, ``paywall``), each with ``register(sub, common)`` adding its parser(s) and handler(s);
``common`` holds what they share. Heavy modules are imported inside the handlers only: building the parser
imports none of them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import build, check, claims, deploy, gpu, license, new, paywall, schema, serve, verify
from .common import (
    EXIT_CONTENT,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    common_parser,
    default_format,
    emit,
)

__all__ = [
    "COMMANDS",
    "EXIT_CONTENT",
    "EXIT_INTERNAL",
    "EXIT_OK",
    "EXIT_USAGE",
    "UsageError",
    "build_parser",
    "default_format",
    "emit",
    "main",
]

# in the order `qbank --help` lists them
COMMANDS = (check, schema, new, claims, build, verify, gpu, deploy, serve, license, paywall)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    common = common_parser()
    parser = argparse.ArgumentParser(prog="qbank", description="Check, verify and build the question bank.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for command in COMMANDS:
        command.register(sub, common)
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
            import traceback  # only here: importing it costs a warm `qbank verify` a tenth of its time

            traceback.print_exc()
        else:
            sys.stderr.write(f"qbank: internal error: {type(exc).__name__}: {exc} (run with -v for a traceback)\n")
        return EXIT_INTERNAL
