"""Site search: a chunked Pagefind index over the built HTML, so readers download only what a query needs.

mkdocs-material's own index is one JSON file that grows with the site (4.7 MB, 666 KB gzipped, at
1,000 questions); Pagefind splits it into small fragments fetched per query.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ..search.stream import EXCLUDED
from .pagefind_stable import stabilise

OUTPUT = "pagefind"


def pagefind_command(site_dir: Path) -> list[str]:
    """The Pagefind command over a built site (the binary ships in the ``pagefind[bin]`` wheel)."""
    return [
        *(sys.executable, "-m", "pagefind", "--site", str(site_dir), "--output-subdir", OUTPUT),
        *("--silent", "--force-language", "en"),
        *(arg for selector in EXCLUDED for arg in ("--exclude-selectors", selector)),
    ]


def build_search_index(site_dir: Path, timeout: float = 600) -> str | None:
    """Index the built site; returns an error message, or None when the index was written."""
    try:
        proc = subprocess.run(pagefind_command(site_dir), capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"pagefind did not run: {exc}"
    if proc.returncode != 0 or not (site_dir / OUTPUT / "pagefind.js").is_file():
        return f"pagefind failed ({proc.returncode}): {(proc.stderr or proc.stdout).strip()[-500:]}"
    stabilise(site_dir / OUTPUT)  # the same pages give the same bytes: a deploy uploads what changed
    return None
