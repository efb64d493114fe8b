"""Balanced shards: longest-processing-time-first greedy over estimated run times (pure functions).

Greedy LPT puts each script, longest first, on the shard with the least work so far. Its longest shard is at
most the mean load plus one script (every script went to the least-loaded shard, which was at most the mean
when it got its last one), so it is within one longest script of the optimal partition. Ties break by slug
and by shard number, so the same estimates always give the same shards, on every machine.
"""

from __future__ import annotations

import heapq
import statistics
from collections.abc import Iterable, Mapping

DEFAULT_SECONDS = 1.0
"""The estimate for a script with no recorded run when no script has one either."""


def estimates(slugs: Iterable[str], recorded: Mapping[str, float]) -> dict[str, float]:
    """Each script's expected seconds: its recorded run time, else the median of the recorded ones
    (``DEFAULT_SECONDS`` when nothing is recorded). Negative or non-finite records count as unknown."""
    known = {s: float(t) for s, t in recorded.items() if isinstance(t, int | float) and 0 <= t < float("inf")}
    default = statistics.median(known.values()) if known else DEFAULT_SECONDS
    return {s: known.get(s, default) for s in slugs}


def partition(seconds: Mapping[str, float], n: int) -> list[list[str]]:
    """``n`` shards (lists of slugs in slug order) whose summed seconds are balanced by greedy LPT.

    Every script lands in exactly one shard; a shard may be empty when there are fewer scripts than shards.
    """
    if n < 1:
        raise ValueError(f"shard count must be at least 1, got {n}")
    heap = [(0.0, k) for k in range(n)]  # (load, shard): the least-loaded, lowest-numbered shard first
    shards: list[list[str]] = [[] for _ in range(n)]
    for slug in sorted(seconds, key=lambda s: (-seconds[s], s)):
        load, k = heapq.heappop(heap)
        shards[k].append(slug)
        heapq.heappush(heap, (load + seconds[slug], k))
    return [sorted(shard) for shard in shards]


def loads(seconds: Mapping[str, float], shards: list[list[str]]) -> list[float]:
    """The summed estimated seconds of each shard."""
    return [sum(seconds[s] for s in shard) for shard in shards]
