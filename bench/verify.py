"""Benchmark of ``qbank verify``: warm no-op against a bare hashing loop, and ``--jobs 2`` against ``--jobs 1``.

    .venv/bin/python bench/verify.py [--n 5000] [--cold-n 30] [--repeat 5] [--repo DIR]

Generates N synthetic percent-format scripts (one in ten imports a shared ``verify/_lib`` module) in a
temporary repository (or ``--repo DIR``, kept and reused: a cold fill of 5,000 scripts takes many minutes),
fills the cache with a real cold run, then reports, as ratios measured in this run:

- warm: a no-op ``qbank verify`` (the console script in a fresh process, zero scripts executed: interpreter
  start-up and imports included) against the bare hashing loop over the same files, also in a fresh process
  of the same interpreter (``python -c``: start-up included on both sides; target: within 2x at 5,000
  scripts), and, for comparison with older figures, against the same loop inside this process (no start-up);
  ``python -X importtime`` shows what the process imports;
- cold: ``--jobs 1`` against ``--jobs 2`` on ``--cold-n`` scripts with an empty cache (target: >= 1.7x).

Child processes may write bytecode (``PYTHONDONTWRITEBYTECODE`` is dropped from their environment), as on a
developer's machine or a CI runner: with it set and no ``__pycache__`` written before, an editable install
compiles every qbank module it imports on every start.

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


CHILD_ENV = dict(os.environ)
LOOP = """import hashlib, os, sys
n = 0
for folder in sys.argv[1:]:
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            with open(os.path.join(folder, name), "rb") as fh:
                hashlib.sha256(fh.read()).hexdigest()
            n += 1
print(n)
"""
"""The baseline in its own process: list the script folders, read and hash every file once."""


def qbank(root: Path, *args: str, full: bool = False) -> tuple[float, str]:
    """Wall time and stdout of one ``qbank verify`` process (``full``: ``python -m qbank.cli``, no fast path)."""
    exe = [sys.executable, "-m", "qbank.cli"] if full else [str(Path(sys.executable).with_name("qbank"))]
    start = time.perf_counter()
    proc = subprocess.run([*exe, "verify", "--root", str(root), *args], capture_output=True, text=True, env=CHILD_ENV)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"qbank verify failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return elapsed, proc.stdout


def hash_loop_process(root: Path, count: int) -> float:
    """The baseline: a fresh ``python -c`` process (the same interpreter and site as ``qbank``) that reads and
    hashes every file of ``verify/`` and ``verify/_lib/`` once."""
    folders = [str(root / "verify"), str(root / "verify" / "_lib")]
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", LOOP, *folders], capture_output=True, text=True, env=CHILD_ENV)
    elapsed = time.perf_counter() - start
    assert proc.returncode == 0 and int(proc.stdout) == count, (proc.stdout, proc.stderr[-2000:])
    return elapsed


def hash_loop(files: list[Path]) -> float:
    """The old baseline: read and hash every file once, in this process (no interpreter start-up)."""
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
    ap.add_argument("--repo", type=Path, default=None, help="keep the warm repository here and reuse it")
    args = ap.parse_args()
    CHILD_ENV.pop("PYTHONDONTWRITEBYTECODE", None)

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
        warm = args.repo or tmp / "warm"
        if not (warm / "verify").is_dir():
            make_repo(warm, args.n)
        files = sorted((warm / "verify").rglob("*.py"))
        assert len(files) == args.n + 1, f"{warm} holds {len(files) - 1} scripts, not --n {args.n}"
        fill, out = qbank(warm, "--jobs", str(os.cpu_count() or 1))
        print(f"filling the cache: {args.n} scripts in {fill:.1f} s ({out.splitlines()[-2] if out else ''})")
        qbank(warm)  # settles hashes taken while the files were fresh (racy-hash window), writes bytecode
        hash_loop_process(warm, len(files))
        qbank(warm, full=True)  # writes the full command line's bytecode
        runs, base, runs_cpu, base_cpu, inloop, inloop_cpu, full, full_cpu = [], [], [], [], [], [], [], []
        for _ in range(args.repeat):  # interleaved, so that load changes hit all four
            cpu = children_cpu()
            elapsed, out = qbank(warm)
            runs_cpu.append(children_cpu() - cpu)
            assert f"{args.n} scripts: 0 ran" in out, out
            runs.append(elapsed)
            cpu = children_cpu()
            base.append(hash_loop_process(warm, len(files)))
            base_cpu.append(children_cpu() - cpu)
            cpu = time.process_time()
            inloop.append(hash_loop(files))
            inloop_cpu.append(time.process_time() - cpu)
            cpu = children_cpu()
            elapsed, out = qbank(warm, full=True)
            full_cpu.append(children_cpu() - cpu)
            assert f"{args.n} scripts: 0 ran" in out, out
            full.append(elapsed)
        w, b, il = statistics.median(runs), statistics.median(base), statistics.median(inloop)
        # CPU time: what each costs, whatever else the machine runs (a new process waits for a core under load)
        wc, bc, ilc = statistics.median(runs_cpu), statistics.median(base_cpu), statistics.median(inloop_cpu)
        print(
            f"warm, {args.n} scripts: no-op qbank verify {w * 1000:.0f} ms, hashing loop process "
            f"{b * 1000:.0f} ms -> {w / b:.2f}x (target <= 2x)"
        )
        print(f"  CPU time: no-op qbank verify {wc * 1000:.0f} ms, hashing loop process {bc * 1000:.0f} ms "
              f"-> {wc / bc:.2f}x")
        print(f"  against the loop in this process (no start-up): {il * 1000:.0f} ms -> {w / il:.2f}x wall, "
              f"CPU {ilc * 1000:.0f} ms -> {wc / ilc:.2f}x")
        f, fc = statistics.median(full), statistics.median(full_cpu)
        print(f"  the full command line (python -m qbank.cli verify, no fast path): {f * 1000:.0f} ms, "
              f"CPU {fc * 1000:.0f} ms -> {f / b:.2f}x wall, {fc / bc:.2f}x CPU of the loop process")
        from qbank.verify.engine import VerifyConfig, verify

        inproc = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            assert verify(warm, VerifyConfig()).ran == 0
            inproc.append(time.perf_counter() - start)
        ip = statistics.median(inproc)
        print(f"  (in-process engine check without interpreter start-up: {ip * 1000:.0f} ms -> {ip / il:.2f}x "
              "the in-process loop)")
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
