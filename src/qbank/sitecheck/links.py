"""Broken internal links: linkchecker over the built site served on 127.0.0.1."""

from __future__ import annotations

import contextlib
import csv
import functools
import io
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ..problems import Problem, error

# Our own local server: no politeness delay (it also needs the LinkChecker response header), a few threads.
RC = "[checking]\nmaxrequestspersecond=1000\nthreads=4\n"


class _QuietHandler(SimpleHTTPRequestHandler):
    def end_headers(self) -> None:
        """Tell linkchecker this is our own server, so it lifts its 10-requests-per-second politeness limit."""
        self.send_header("LinkChecker", "qbank")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        """Keep request logs out of the output."""


@contextlib.contextmanager
def serve(site_dir: Path) -> Iterator[str]:
    """Serve a folder over HTTP on a free port of 127.0.0.1; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(site_dir))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def linkchecker_command() -> list[str]:
    """The linkchecker executable next to this interpreter, else the one on PATH."""
    local = Path(sys.executable).with_name("linkchecker")
    found = str(local) if local.exists() else shutil.which("linkchecker")
    if found is None:
        raise FileNotFoundError("linkchecker is not installed (pip install linkchecker)")
    return [found]


def parse_csv(output: str, base: str, site_name: str) -> list[Problem]:
    """Invalid rows of linkchecker's CSV output as problems at the page that holds the link."""
    rows = [ln for ln in output.splitlines() if ln and not ln.startswith("#")]
    problems = []
    for row in csv.DictReader(io.StringIO("\n".join(rows)), delimiter=";"):
        if row.get("valid") != "False":
            continue
        parent = (row.get("parentname") or "").removeprefix(base) or "index.html"
        if parent.endswith("/") or not parent:
            parent += "index.html"
        target = (row.get("url") or row.get("urlname") or "").removeprefix(base)
        line = int(row["line"]) if (row.get("line") or "").isdigit() else 0
        col = int(row["column"]) if (row.get("column") or "").isdigit() else 0
        problems.append(
            error(f"{site_name}/{parent}", line, col, "link-broken", f"broken link to {target}: {row.get('result')}")
        )
    return problems


def check_links(site_dir: Path, timeout: float = 600) -> list[Problem]:
    """Run linkchecker over the served site; every broken internal link is a problem."""
    with tempfile.TemporaryDirectory() as tmp, serve(site_dir) as base:
        rc = Path(tmp) / "linkcheckerrc"
        rc.write_text(RC, encoding="utf-8")
        proc = subprocess.run(
            [*linkchecker_command(), "-f", str(rc), "--no-status", "--no-warnings", "-o", "csv", base],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    if proc.returncode not in (0, 1):
        return [error(site_dir.name, 0, 0, "linkcheck-failed", f"linkchecker failed: {proc.stderr.strip()[-500:]}")]
    return parse_csv(proc.stdout, base, site_dir.name)
