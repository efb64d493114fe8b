"""Profile one save of `qbank serve` in-process: where the check's and the rebuild's time go.

    python bench/serve_profile.py --n 1000            # top functions of an answer edit, cumulative time
    python bench/serve_profile.py --n 1000 --edit verify --top 40

Generates ``bench/build.py``'s synthetic corpus, opens a preview session as `qbank serve` does, rebuilds once
(cold), then times ``--saves`` saves of one file (``answer``, ``verify``, ``question`` or ``concepts``) with the
check/build split of each, and prints a cProfile of the last one. Timings move with the machine's load: read them
next to ``uptime``.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import io
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType


def _bench_build() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_build", Path(__file__).with_name("build.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def edit(root: Path, what: str, i: int) -> None:
    """One save of the kind asked for (a change a reader would see, or a script's new claim)."""
    slug = "synthetic-question-00001"
    if what == "answer":
        path = root / "answers" / f"{slug}.md"
        path.write_text(path.read_text().rstrip("\n") + f"\n\nA fresh sentence PROFILE{i}.\n")
    elif what == "verify":
        path = root / "verify" / f"{slug}.py"
        path.write_text(path.read_text() + f'check(True, "profile save {i}")\n')
    elif what == "question":
        path = root / "questions" / f"{slug}.yaml"
        path.write_text(path.read_text().replace("editorial_rank:", f"# save {i}\neditorial_rank:", 1))
    elif what == "concepts":
        path = root / "questions" / "_catalog" / "concepts.yaml"
        path.write_text(path.read_text() + f"# save {i}\n")
    else:
        raise SystemExit(f"unknown --edit {what!r}")


def digest(report: object) -> str:
    """A short digest of a report's problems (the same problems give the same digest, whatever the code path)."""
    import hashlib

    texts = sorted(p.text() for p in report.problems)  # type: ignore[attr-defined]
    return hashlib.sha256("\n".join(texts).encode()).hexdigest()[:12]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--edit", default="answer", choices=["answer", "verify", "question", "concepts"])
    parser.add_argument("--saves", type=int, default=3)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--sort", default="cumulative")
    parser.add_argument("--root", type=Path, help="reuse a corpus written by an earlier run (--keep)")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()

    from qbank.preview import close_session, open_session
    from qbank.preview.serve import rebuild

    tmp = Path(tempfile.mkdtemp(prefix="qbank-bench-serve-profile-"))
    root = args.root.resolve() if args.root else tmp / "repo"
    if not args.root:
        t0 = time.perf_counter()
        _bench_build().write_corpus(root, args.n)
        print(f"corpus of {args.n} questions written in {time.perf_counter() - t0:.1f} s ({root})")
    os.chdir(root)
    site = tmp / "site"
    open_session(root)
    url = "http://127.0.0.1:8000/"
    t0 = time.perf_counter()
    first = rebuild(root, site, url)
    print(f"first build {time.perf_counter() - t0:.2f} s: check {first.check_s:.2f} s, build {first.build_s:.2f} s, "
          f"{len(first.report.problems)} problems, failure {first.failure}")
    profiler = cProfile.Profile()
    for i in range(args.saves):
        edit(root, args.edit, i)
        last = i == args.saves - 1
        if last:
            profiler.enable()
        t0 = time.perf_counter()
        r = rebuild(root, site, url)
        total = time.perf_counter() - t0
        if last:
            profiler.disable()
        print(f"save {i} ({args.edit}): {total:.2f} s: check {r.check_s:.2f} s, build {r.build_s:.2f} s, "
              f"rendered {r.rendered} of {r.pages}, {len(r.report.problems)} problems ({digest(r.report)}), "
              f"failure {r.failure}")
    close_session(root)
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats(args.sort).print_stats(args.top)
    print(out.getvalue())
    print(f"load average: {os.getloadavg()}")
    if args.keep:
        print(f"kept {tmp}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
