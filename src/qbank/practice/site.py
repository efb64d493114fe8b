"""What the site serves for drills besides pages: the vendored Pyodide files and the test harness."""

from __future__ import annotations

from pathlib import Path

from . import harness
from .pyodide import FILES, HARNESS_SITE, SITE_DIR, VENDOR, vendored


class PyodideMissing(RuntimeError):
    """The site has drills but Pyodide is not vendored (``make vendor``)."""


def asset_files(root: Path, drills: bool) -> list[tuple[str, Path]]:
    """(site path, source file) pairs to copy into the site; none without drills."""
    if not drills:
        return []
    folder = vendored(root)
    if folder is None:
        raise PyodideMissing(f"the site has code drills but {VENDOR}/ is missing: run `make vendor`")
    out = [(f"{SITE_DIR}/{name}", folder / name) for name in FILES]
    out.append((HARNESS_SITE, Path(str(harness.__file__))))
    return out
