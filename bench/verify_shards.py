"""Benchmark: a cold ``qbank verify`` of N synthetic scripts split into 1, 2 and 3 shards, as CI runs it.

    .venv/bin/python bench/verify_shards.py [--n 1000] [--shards 1,2,3] [--project 5000:10]

Generates the synthetic scripts of ``bench/verify.py`` in a temporary repository. For each shard count it
writes one plan (``qbank verify --write-plan``, cold: every script estimated alike) and runs every shard
``qbank verify --shard K/N --plan`` in a fresh copy of the repository with an empty cache, one after another
(each stands for a CI machine of its own, with all of this machine's cores). It prints the wall time of each
shard and the CPU time (user + system, the sandboxed children included) of all of them, then projects the
wall for a larger bank on more machines from the measured N = 1 run:

    wall(M scripts, N shards) = start + (wall(1 shard) - start) * (M / n) / N

where ``start`` is a no-op ``qbank verify`` (interpreter, imports, sandbox probe) measured here. The
projection assumes the synthetic scripts' cost per script holds and the shards are balanced (the plan is
greedy by recorded run time: within one script of the best split).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import verify as bench_verify  # bench/verify.py: the synthetic scripts


def qbank(root: Path, *args: str) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds and stdout of one ``qbank verify`` process."""
    exe = Path(sys.executable).with_name("qbank")
    cpu0, t0 = bench_verify.children_cpu(), time.perf_counter()
    proc = subprocess.run([str(exe), "verify", "--root", str(root), *args], capture_output=True, text=True)
    wall, cpu = time.perf_counter() - t0, bench_verify.children_cpu() - cpu0
    if proc.returncode != 0:
        raise SystemExit(f"qbank verify {' '.join(args)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return wall, cpu, proc.stdout


def main() -> int:
    """Run every shard count, print the table and the projection."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000, help="synthetic scripts (default 1000)")
    ap.add_argument("--shards", default="1,2,3", help="shard counts to run (default 1,2,3)")
    ap.add_argument("--project", default="5000:10", metavar="M:N", help="project the wall of M scripts on N shards")
    args = ap.parse_args()
    counts = [int(x) for x in args.shards.split(",")]
    big, big_n = (int(x) for x in args.project.split(":"))

    with tempfile.TemporaryDirectory(prefix="qbank-bench-shards-") as name:
        tmp = Path(name)
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
        base = tmp / "base"
        bench_verify.make_repo(base, args.n)
        empty = tmp / "empty"
        bench_verify.make_repo(empty, 0)
        qbank(empty)  # warm the page cache for the interpreter and the sandbox
        start, _, _ = qbank(empty)
        print(f"no-op qbank verify (start-up): {start:.2f} s")
        rows = []
        single = 0.0
        for n in counts:
            plan = tmp / f"plan-{n}.json"
            qbank(base, "--write-plan", str(plan), "--shards", str(n))
            sizes = [len(part) for part in json.loads(plan.read_text())["shards"]]
            walls, cpus = [], []
            for k in range(1, n + 1):
                work = tmp / f"n{n}-k{k}"
                shutil.copytree(base, work, symlinks=True)
                wall, cpu, out = qbank(work, "--shard", f"{k}/{n}", "--plan", str(plan))
                assert f"{sizes[k - 1]} scripts: {sizes[k - 1]} ran" in out, out
                walls.append(wall)
                cpus.append(cpu)
                shutil.rmtree(work)
            if n == 1:
                single = walls[0]
            rows.append((n, sizes, walls, cpus))
            print(
                f"N = {n}: wall per shard {', '.join(f'{w:.1f}' for w in walls)} s (scripts {sizes}); "
                f"slowest {max(walls):.1f} s; total CPU {sum(cpus):.1f} s",
                flush=True,
            )
        print()
        print("| N | scripts per shard | wall per shard (s) | slowest shard (s) | total CPU (s) |")
        print("| ---: | --- | --- | ---: | ---: |")
        for n, sizes, walls, cpus in rows:
            print(f"| {n} | {', '.join(map(str, sizes))} | {', '.join(f'{w:.1f}' for w in walls)} "
                  f"| {max(walls):.1f} | {sum(cpus):.1f} |")
        if single:
            projected = start + (single - start) * (big / args.n) / big_n
            print(f"\nprojected wall for {big} scripts on {big_n} shards: {projected:.0f} s per shard "
                  f"(from N = 1: {single:.1f} s for {args.n}, start-up {start:.2f} s)")
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
