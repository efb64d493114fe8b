"""Profile one qbank build of a synthetic bank: where the time goes, and what grows faster than the pages.

    python bench/build_profile.py --n 300 --n 1200     # cumulative seconds per step, and their growth

Each N is written with ``bench/build.py``'s ``write_corpus`` and built once under cProfile (wall-clock
timer: under load the shares are what matters). The profile covers the build's own process only: with a page
worker (``qbank.pagepool``) the pages' content work runs in the worker and shows here only as handing over.
A step whose time grows much faster than the page count
between the two sizes is superlinear.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build import print_figures, timed, write_corpus

STEPS = {
    "social cards (waiting for the workers)": ("cards/pool.py", "finish"),
    "search: pages handed to Pagefind as written (SearchStream.add)": ("search/stream.py", "add"),
    "search: the rest, and the index written (SearchStream.finish)": ("search/stream.py", "finish"),
    "load_corpus": ("qbank/corpus.py", "load_corpus"),
    "render_pages": ("render/pages.py", "render_pages"),
    "related questions": ("render/question.py", "related"),
    "page content work (sanitize, math, seal), where the build does it (no page worker)": (
        "pagepool/content.py", "page_content"),
    "page worker: handing over and taking back (PagePool.submit, ready, rest)": ("pagepool/pool.py", "_send"),
    "CSP (paywall on_post_page)": ("paywall/site.py", "on_post_page"),
    "mkdocs Markdown (+ page hooks)": ("mkdocs/commands/build.py", "_populate_page"),
    "mkdocs templates": ("mkdocs/commands/build.py", "_build_page"),
}


def profile(n: int, tmp: Path) -> dict[str, float]:
    """Cumulative seconds of each step of one build of ``n`` questions."""
    root = tmp / f"repo-{n}"
    write_corpus(root, n)
    profiler = cProfile.Profile()
    profiler.enable()
    wall, cpu = timed(root, tmp / f"site-{n}")
    profiler.disable()
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    out = {"pages": float(sum(1 for _ in (tmp / f"site-{n}").rglob("index.html"))), "wall_s": wall, "cpu_s": cpu}
    for name, (file, func) in STEPS.items():
        out[name] = sum(v[3] for k, v in stats.items() if k[0].endswith(file) and k[2] == func)
    return {k: round(v, 2) for k, v in out.items()}


def main() -> int:
    """Profile each --n and print the steps' seconds and their growth from the first N to the last."""
    parser = argparse.ArgumentParser(description="profile a qbank build at two sizes")
    parser.add_argument("--n", type=int, action="append", help="questions (give two, e.g. --n 300 --n 1200)")
    args = parser.parse_args()
    sizes = args.n or [300, 1200]

    def measure(tmp: Path) -> dict[str, object]:
        runs = {n: profile(n, tmp) for n in sizes}
        first, last = runs[sizes[0]], runs[sizes[-1]]
        growth = {k: round(last[k] / first[k], 2) for k in first if first[k] > 0}
        return {"runs": runs, f"growth_{sizes[0]}_to_{sizes[-1]}": growth}

    return print_figures("qbank-build-profile-", False, measure)


if __name__ == "__main__":
    sys.exit(main())
