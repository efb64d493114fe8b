"""Benchmark: save-to-reload time of `qbank serve` at N questions, against plain `mkdocs serve` of the same Markdown.

    python bench/serve.py            # N = 1,000 questions, 3 edits each way
    python bench/serve.py --n 200 --edits 5
    python bench/serve.py --keep; python bench/serve.py --reuse /tmp/qbank-bench-serve-XXXX   # no cold verify

Generates the synthetic corpus of ``bench/build.py`` (same generator), starts `qbank serve` on a free port,
appends a fresh sentence to one answer and times until the served question page contains it; then does the
same with plain mkdocs-material's `mkdocs serve` over the same Markdown (``bench/build.py``'s plain copy),
run after the first server has stopped so the two never share the CPU. Reports the median of ``--edits``
saves each way, the ratio, and the check/build split `qbank serve` prints per rebuild.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import ModuleType


def _bench_build() -> ModuleType:
    """``bench/build.py`` as a module (bench/ is a folder of scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("bench_build", Path(__file__).with_name("build.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def free_port() -> int:
    """A port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait(probe: Callable[[], object], deadline_s: float, what: str) -> object:
    """Poll ``probe`` every 20 ms until it returns something truthy."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            value = probe()
        except (urllib.error.URLError, ConnectionError, OSError):
            value = None
        if value:
            return value
        time.sleep(0.02)
    raise SystemExit(f"timed out waiting for {what}")


def fetch(url: str) -> str:
    """A page's text."""
    with urllib.request.urlopen(url, timeout=30) as resp:
        return str(resp.read().decode())


class Server:
    """A serve command in a subprocess, its output in a file."""

    def __init__(self, cmd: list[str], cwd: Path, log: Path) -> None:
        self.log = log
        self.out = log.open("w")
        self.proc = subprocess.Popen(cmd, cwd=cwd, stdout=self.out, stderr=subprocess.STDOUT)

    def text(self) -> str:
        """What it printed so far."""
        return self.log.read_text()

    def stop(self) -> None:
        """SIGTERM (qbank serve handles it as Ctrl-C and removes its temporary site), then kill."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.out.close()


def save_to_reload(source: Path, page_url: str, edits: int, tag: str) -> list[float]:
    """Seconds from each save of ``source`` until ``page_url`` serves the new sentence."""
    times = []
    for i in range(edits):
        token = f"BENCH-{tag}-{i}-{time.time_ns()}"
        text = source.read_text()
        t0 = time.perf_counter()
        source.write_text(text.rstrip("\n") + f"\n\nA fresh sentence {token}.\n")
        wait(lambda token=token: token in fetch(page_url), 600, f"{tag} edit {i}")  # type: ignore[misc]
        times.append(time.perf_counter() - t0)
        time.sleep(1.5)  # let the watcher settle before the next save
    return times


def run(n: int, edits: int, tmp: Path, reuse: Path | None = None) -> dict[str, object]:
    """Generate the corpus (or reuse one an earlier ``--keep`` run left, with its verification cache), time saves
    under `qbank serve`, then under plain `mkdocs serve`."""
    bb = _bench_build()
    t0 = time.perf_counter()
    if reuse is not None:
        root, plain = reuse / "repo", reuse / "plain"
    else:
        root, plain = tmp / "repo", tmp / "plain"
        plain.mkdir()
        bb.write_corpus(root, n)
        bb.write_plain(root, plain)
    setup = time.perf_counter() - t0
    slug = f"synthetic-question-{1:05d}"  # premium (i % 3 != 0): its premium section is shown in preview

    qb = Server([sys.executable, "-m", "qbank.cli", "serve", "--root", str(root), "--port", "0"], root,
                tmp / "qbank-serve.log")
    try:
        t0 = time.perf_counter()
        url = wait(lambda: re.search(r"previewing .* at (http://\S+)", qb.text()), 1800, "qbank serve to start")
        assert isinstance(url, re.Match)
        first = time.perf_counter() - t0
        page = url.group(1) + f"questions/{slug}/"
        qb_times = save_to_reload(root / "answers" / f"{slug}.md", page, edits, "qbank")
        premium_shown = "preview: premium shown" in fetch(page)
    finally:
        qb.stop()
    splits = [(float(c), float(b)) for c, b in re.findall(r"check ([\d.]+) s, build ([\d.]+) s", qb.text())]

    port = free_port()
    pl = Server([sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{port}"], plain, tmp / "mkdocs-serve.log")
    try:
        t0 = time.perf_counter()
        base = f"http://127.0.0.1:{port}/"
        wait(lambda: fetch(base + f"questions/{slug}/"), 1800, "mkdocs serve to start")
        plain_first = time.perf_counter() - t0
        pl_times = save_to_reload(plain / "docs" / "questions" / f"{slug}.md", base + f"questions/{slug}/", edits,
                                  "plain")
    finally:
        pl.stop()

    q, p = statistics.median(qb_times), statistics.median(pl_times)
    return {
        "questions": n,
        "setup_s": round(setup, 1),
        "qbank_serve_first_build_s": round(first, 1),
        "plain_mkdocs_serve_first_build_s": round(plain_first, 1),
        "qbank_save_to_reload_s": [round(t, 2) for t in qb_times],
        "plain_save_to_reload_s": [round(t, 2) for t in pl_times],
        "qbank_median_s": round(q, 2),
        "plain_median_s": round(p, 2),
        "ratio": round(q / p, 3),
        "qbank_rebuild_check_build_s": [(round(c, 2), round(b, 2)) for c, b in splits[1:]],
        "premium_shown_in_preview": premium_shown,
    }


def main() -> int:
    """Parse arguments, run, print the figures as JSON."""
    parser = argparse.ArgumentParser(description="qbank serve save-to-reload benchmark against plain mkdocs serve")
    parser.add_argument("--n", type=int, default=1000, help="number of questions (default 1000)")
    parser.add_argument("--edits", type=int, default=3, help="saves timed each way; the median is reported")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (and the server logs)")
    parser.add_argument("--reuse", type=Path, help="the folder of an earlier --keep run: its corpus (N as it was "
                        "written) and verification cache, so the first build runs no script")
    args = parser.parse_args()
    reuse = args.reuse.resolve() if args.reuse else None
    return int(_bench_build().print_figures("qbank-bench-serve-", args.keep,
                                            lambda tmp: run(args.n, args.edits, tmp, reuse)))


if __name__ == "__main__":
    sys.exit(main())
