"""The vendored Pyodide the drill pages run on: where `make` puts it and which files the site serves.

The npm package (pinned in the Makefile) holds 13 MB; a drill needs only the runtime, the standard
library and the lock file (no packages: drills are pure Python).
"""

from __future__ import annotations

from pathlib import Path

VENDOR = ".vendor/pyodide/node_modules/pyodide"
SITE_DIR = "assets/practice/pyodide"
FILES = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")
HARNESS_SITE = "assets/practice/harness.py"


def vendored(root: Path) -> Path | None:
    """The vendored package folder when every file a drill needs is there."""
    folder = root / VENDOR
    return folder if all((folder / f).is_file() for f in FILES) else None


def served_bytes(root: Path) -> int | None:
    """What a reader downloads on Run, uncompressed (None when Pyodide is not vendored)."""
    folder = vendored(root)
    return sum((folder / f).stat().st_size for f in FILES) if folder else None
