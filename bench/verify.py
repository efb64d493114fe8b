"""Benchmark of ``qbank verify``: warm no-op against a bare hashing loop, and ``--jobs 2`` against ``--jobs 1``.

    .venv/bin/python bench/verify.py [--n 5000] [--cold-n 30] [--repeat 5]

Generates N synthetic percent-format scripts (one in ten imports a shared ``verify/_lib`` module) in a
temporary repository, fills the cache with a real cold run, then reports, as ratios measured in this run:

- warm: a no-op ``qbank verify`` (a fresh process, zero scripts executed: interpreter start-up and imports
  included) against a loop in one process that only reads and hashes the same files (target: within 2x at
  5,000 scripts); ``python -X importtime`` shows what the process imports;
- cold: ``--jobs 1`` against ``--jobs 2`` on ``--cold-n`` scripts with an empty cache (target: >= 1.7x).

Medians of ``--repeat`` runs; the machine's load is printed because both ratios depend on idle cores.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCRIPT = """# %% [markdown]
# Synthetic derivation {i}: the KV cache of a model with {layers} layers.

# %%
from qbank.verify import check, claim, given
{lib_import}
layers = given("layers", {layers}, source="synthetic benchmark input")
kv = claim("kv_per_token", {kv_expr}, unit="B")
print(f"{{kv:,.0f}} bytes per token")
check(kv > 0, "a positive size")
"""
LIB = "def kv_bytes(layers: int) -> int:\n    return 2 * layers * 8 * 128 * 2\n"


def make_repo(root: Path, n: int) -> list[Path]:
    """A repository with ``n`` scripts; files dated ten minutes back, as after a checkout."""
    (root / "questions").mkdir(parents=True)
    (root / "verify" / "_lib").mkdir(parents=True)
    (root / "verify" / "_lib" / "synth.py").write_text(LIB)
    for i in range(n):
        uses_lib = i % 10 == 0
        text = SCRIPT.format(
            i=i,
            layers=i % 120 + 1,
            lib_import="import synth\n" if uses_lib else "",
            kv_expr="synth.kv_bytes(layers)" if uses_lib else "2 * layers * 8 * 128 * 2",
        )
        (root / "verify" / f"s{i:05d}.py").write_text(text)
    old = time.time() - 600
    files = sorted((root / "verify").rglob("*.py"))
    for path in files:
        os.utime(path, (old, old))
    return files


def children_cpu() -> float:
    """User + system seconds of every finished child process (and theirs) so far."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def qbank(root: Path, *args: str) -> tuple[float, str]:
    """Wall time and stdout of one ``qbank verify`` process."""
    exe = Path(sys.executable).with_name("qbank")
    start = time.perf_counter()
    proc = subprocess.run([str(exe), "verify", "--root", str(root), *args], capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"qbank verify failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return elapsed, proc.stdout


def hash_loop(files: list[Path]) -> float:
    """The baseline: read and hash every file once, in this process."""
    start = time.perf_counter()
    for path in files:
        hashlib.sha256(path.read_bytes()).hexdigest()
    return time.perf_counter() - start


def main() -> int:
    """Run both comparisons and print their ratios."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=5000, help="scripts for the warm comparison (default 5000)")
    ap.add_argument("--cold-n", type=int, default=30, help="scripts for the jobs comparison")
    ap.add_argument("--repeat", type=int, default=5, help="runs per measurement (median)")
    ap.add_argument("--cold-repeat", type=int, default=1, help="runs per cold measurement (median)")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="qbank-bench-"))
    try:
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
        # cold: --jobs 1 vs --jobs 2, alternating so that load changes hit both
        cold = tmp / "cold"
        make_repo(cold, args.cold_n)
        times: dict[str, list[float]] = {"1": [], "2": []}
        for _ in range(args.cold_repeat):
            for jobs in ("1", "2"):
                shutil.rmtree(cold / ".qbank", ignore_errors=True)
                elapsed, out = qbank(cold, "--jobs", jobs)
                assert f"{args.cold_n} ran" in out, out
                times[jobs].append(elapsed)
        j1, j2 = statistics.median(times["1"]), statistics.median(times["2"])
        print(
            f"cold, {args.cold_n} scripts: --jobs 1 {j1:.2f} s, --jobs 2 {j2:.2f} s -> {j1 / j2:.2f}x (target >= 1.7x)"
        )

        # warm: a no-op run against the bare hashing loop over the same files
        warm = tmp / "warm"
        files = make_repo(warm, args.n)
        fill, out = qbank(warm, "--jobs", str(os.cpu_count() or 1))
        print(f"filling the cache: {args.n} scripts in {fill:.1f} s")
        qbank(warm)  # settles hashes taken while the files were fresh (racy-hash window)
        runs, base, runs_cpu, base_cpu = [], [], [], []
        for _ in range(args.repeat):
            cpu = children_cpu()
            elapsed, out = qbank(warm)
            runs_cpu.append(children_cpu() - cpu)
            assert f"{args.n} scripts: 0 ran" in out, out
            runs.append(elapsed)
            cpu = time.process_time()
            base.append(hash_loop(files))
            base_cpu.append(time.process_time() - cpu)
        w, b = statistics.median(runs), statistics.median(base)
        print(
            f"warm, {args.n} scripts: no-op qbank verify {w * 1000:.0f} ms, hashing loop {b * 1000:.0f} ms "
            f"-> {w / b:.2f}x (target <= 2x)"
        )
        # CPU time: what each costs, whatever else the machine runs (a new process waits for a core under load)
        wc, bc = statistics.median(runs_cpu), statistics.median(base_cpu)
        print(f"  CPU time: no-op qbank verify {wc * 1000:.0f} ms, hashing loop {bc * 1000:.0f} ms -> {wc / bc:.2f}x")
        from qbank.verify.engine import VerifyConfig, verify

        inproc = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            assert verify(warm, VerifyConfig()).ran == 0
            inproc.append(time.perf_counter() - start)
        ip = statistics.median(inproc)
        print(f"  (in-process warm check without interpreter start-up: {ip * 1000:.0f} ms -> {ip / b:.2f}x)")
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
