"""Benchmark: claims extraction against parsing the same Markdown with markdown-it alone.

Prints the ratio extract/parse (cold: scan cache cleared each round) and the per-mutant cost of
re-checking an edited answer (warm: only the changed runs are rescanned), measured in the same run.
Run: .venv/bin/python bench/claims_extract.py
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

from qbank.claims.extract import _parser, extract
from qbank.claims.grammar import _scan

ROOT = Path(__file__).resolve().parents[1]


def best(fn: Callable[[], object], rounds: int = 7) -> float:
    """Median seconds of one call over a few rounds."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    """Measure and print the ratios."""
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "answers").glob("*.md"))]
    texts += [p.read_text(encoding="utf-8") for p in sorted((ROOT / "tests/cases/claims/answers").glob("*.md"))]
    parser = _parser()

    def parse_all() -> None:
        for t in texts:
            parser.parse(t)

    def extract_cold() -> None:
        for t in texts:
            _scan.cache_clear()
            extract(t)

    def extract_warm() -> None:
        for t in texts:
            extract(t.replace("0", "1", 1))

    base = best(parse_all)
    cold = best(extract_cold)
    extract_cold()
    warm = best(extract_warm)
    size = sum(len(t) for t in texts)
    print(f"{len(texts)} answers, {size} characters")
    print(f"markdown-it parse (baseline): {base * 1e3:.1f} ms")
    print(f"claims extract, cold: {cold * 1e3:.1f} ms = {cold / base:.1f}x the parse")
    print(f"claims extract, one edit, warm cache: {warm * 1e3:.1f} ms = {warm / base:.1f}x the parse")


if __name__ == "__main__":
    main()
