"""``qbank schema``: write JSON Schemas for the YAML files."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from .common import EXIT_OK

if TYPE_CHECKING:
    from .common import Subparsers


def register(sub: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add ``schema`` to the subcommands."""
    p = sub.add_parser("schema", parents=[common], help="write JSON Schemas for the YAML files")
    p.add_argument("--out", default="schemas", help="folder for the schema files (default: schemas)")
    p.set_defaults(func=cmd_schema)


def cmd_schema(args: argparse.Namespace) -> int:
    """Write JSON Schemas for the YAML files (editors pick them up via the files' modeline)."""
    from ..schema import write_schemas

    root = Path(args.root).resolve()
    out = root / args.out
    written = write_schemas(out)
    for path in written:
        print(path.relative_to(root).as_posix())
    return EXIT_OK
