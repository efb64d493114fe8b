"""The shard partition: every script in exactly one shard, balanced within one longest script of the optimum,
the same shards from the same records, and unknown scripts estimated by the median."""

from __future__ import annotations

import itertools
import random

import pytest

from qbank.verify.shards.partition import DEFAULT_SECONDS, estimates, loads, partition


def optimal_makespan(seconds: dict[str, float], n: int) -> float:
    """The best longest shard over every assignment (small inputs only)."""
    slugs = list(seconds)
    best = float("inf")
    for assign in itertools.product(range(n), repeat=len(slugs)):
        load = [0.0] * n
        for slug, k in zip(slugs, assign, strict=True):
            load[k] += seconds[slug]
        best = min(best, max(load))
    return best


@pytest.mark.parametrize("seed", range(12))
def test_within_one_longest_script_of_optimal(seed: int) -> None:
    rng = random.Random(seed)
    seconds = {f"s{i}": round(rng.lognormvariate(0, 1.2), 3) for i in range(rng.randint(4, 8))}
    n = rng.randint(2, 3)
    shards = partition(seconds, n)
    assert max(loads(seconds, shards)) <= optimal_makespan(seconds, n) + max(seconds.values()) + 1e-9


def test_every_script_in_exactly_one_shard_and_sorted() -> None:
    rng = random.Random(7)
    seconds = {f"q{i:04d}": rng.uniform(0.1, 30) for i in range(500)}
    shards = partition(seconds, 7)
    flat = [s for shard in shards for s in shard]
    assert sorted(flat) == sorted(seconds) and len(flat) == len(set(flat))
    assert all(shard == sorted(shard) for shard in shards)
    spread = loads(seconds, shards)
    assert max(spread) - min(spread) <= max(seconds.values())


def test_balanced_by_time_not_by_count() -> None:
    # one slow script and many fast ones: the slow one gets a shard of its own
    seconds = {"slow": 10.0, **{f"f{i}": 1.0 for i in range(10)}}
    shards = partition(seconds, 2)
    assert ["slow"] in shards and sorted(loads(seconds, shards)) == [10.0, 10.0]


def test_deterministic_given_the_same_records() -> None:
    seconds = {f"s{i}": float(i % 3) for i in range(30)}  # many ties
    first = partition(seconds, 4)
    shuffled = dict(sorted(seconds.items(), key=lambda kv: random.Random(1).random()))
    assert partition(shuffled, 4) == first
    assert partition(dict(seconds), 4) == first


def test_more_shards_than_scripts_and_bad_counts() -> None:
    assert partition({"a": 1.0, "b": 2.0}, 3) == [["b"], ["a"], []]
    assert partition({}, 2) == [[], []]
    with pytest.raises(ValueError, match="at least 1"):
        partition({"a": 1.0}, 0)


def test_unknown_scripts_get_the_median_of_recorded_times() -> None:
    est = estimates(["a", "b", "c", "new"], {"a": 1.0, "b": 5.0, "c": 2.0, "gone": 100.0, "bad": -1.0})
    assert est == {"a": 1.0, "b": 5.0, "c": 2.0, "new": 3.5}  # the median of 1, 2, 5 and 100
    assert estimates(["x"], {}) == {"x": DEFAULT_SECONDS}
