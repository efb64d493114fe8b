# %% [markdown]
# # Routing for prefix-cache hits without melting the replica that owns the hot prefix
# A seeded replay. 8 replicas; each keeps an LRU set of the system prompts (prefixes) whose KV it holds. Requests
# carry one of 200 prefixes with Zipf popularity. A request costs 1 unit of work if its replica holds the prefix
# and 1 + 2 units if not (the prefix's prefill). Each replica does 1 unit per tick; 5 requests arrive per tick.
# Policies: random; prefix hash (each prefix owned by one replica); and the cache-aware rule of SGLang's router
# (sgl-project/sglang sgl-router/src/policies/cache_aware.rs @026f853b): if the load is imbalanced
# (max − min > abs_threshold and max > rel_threshold · min) route to the shortest queue, otherwise to the replica
# with the best prefix match when the match clears cache_threshold, else to the replica with the smallest tree.
# Here a match is all-or-nothing (a request's prefix is cached or not), so cache_threshold only separates the two.
# Load is each replica's backlog in work units (the router counts pending requests; a miss is a 3-unit request).

# %%
import random
from collections import OrderedDict

from qbank.verify import check, claim, given

replicas = given("replicas", 8, unit="replicas", source="the question's hypothetical: 8 replicas behind one router")
prefixes = given("prefixes", 200, source="the question's hypothetical: 200 distinct system prompts")
zipf_s = given("zipf_exponent", 1.1, source="the question's hypothetical: Zipf popularity of prefixes")
slots = given(
    "cache_slots",
    16,
    unit="slots",
    source="the question's hypothetical: each replica's pool holds 16 prefixes besides running work",
)
arrivals = given("arrivals_per_tick", 5, unit="requests", source="the question's hypothetical")
miss_cost = given("miss_extra_units", 2, source="the question's hypothetical: a prefix prefill costs twice the rest")
hit_cost = given("hit_cost_units", 1, source="the question's hypothetical: a request on a holder costs 1 unit")
service = given("service_units_per_tick", 1, source="the question's hypothetical: a replica does 1 unit per tick")
ticks = given("ticks", 4000, unit="steps", source="replay length")
abs_thr = given(
    "balance_abs_threshold",
    32,
    source="sgl-project/sglang sgl-router/src/policies/mod.rs @08fc5742, impl Default for CacheAwareConfig: "
    "balance_abs_threshold: 32 (CLI defaults differ between releases)",
)
rel_thr = given(
    "balance_rel_threshold",
    1.1,
    source="same CacheAwareConfig default: balance_rel_threshold: 1.1",
)

weights = [1 / (k + 1) ** zipf_s for k in range(int(prefixes))]
total = sum(weights)
popularity = [w / total for w in weights]
claim("hottest_prefix_share", popularity[0], unit="fraction")
claim("replica_fair_share", 1 / replicas, unit="fraction")


# %% [markdown]
# ## The router (the drill)


# %%
def route(policy: str, prefix: int, caches: list[OrderedDict], loads: list[int], rng: random.Random) -> int:
    """Pick a replica for a request with this prefix."""
    n = len(caches)
    if policy == "random":
        return rng.randrange(n)
    if policy == "hash":
        return (prefix * 2654435761) % 2**32 % n  # Knuth multiplicative hash: a fixed owner per prefix
    hi, lo = max(loads), min(loads)
    holders = [r for r in range(n) if prefix in caches[r]]
    if policy == "spill":  # least-loaded holder; spill to the least-loaded replica only when every holder lags
        if holders:
            best = min(holders, key=lambda r: loads[r])
            return best if loads[best] - lo <= abs_thr else loads.index(lo)
        return min(range(n), key=lambda r: (len(caches[r]), loads[r]))
    if policy == "cache_aware" and hi - lo > abs_thr and hi > rel_thr * lo:  # imbalanced: shortest queue
        return loads.index(lo)
    if holders:  # the match: a replica that holds the prefix (the tree returns one; here the lowest index)
        return holders[0]
    return min(range(n), key=lambda r: len(caches[r]))  # smallest tree


def replay(policy: str, seed: int = 7) -> dict[str, float]:
    """Hit rate, backlog and load spread of one policy over the seeded stream."""
    rng = random.Random(seed)
    stream = random.Random(seed + 1)
    caches: list[OrderedDict] = [OrderedDict() for _ in range(int(replicas))]
    backlog = [0] * int(replicas)
    hits = reqs = 0
    served = [0] * int(replicas)
    for _ in range(int(ticks)):
        for _ in range(int(arrivals)):
            p = stream.choices(range(int(prefixes)), popularity)[0]
            r = route(policy, p, caches, backlog, rng)
            hit = p in caches[r]
            hits += hit
            reqs += 1
            cost = int(hit_cost) if hit else int(hit_cost) + int(miss_cost)
            backlog[r] += cost
            served[r] += 1
            caches[r][p] = True
            caches[r].move_to_end(p)
            if len(caches[r]) > slots:
                caches[r].popitem(last=False)
        backlog = [max(0, b - int(service)) for b in backlog]
    mean_served = reqs / replicas
    return {
        "hit": hits / reqs,
        "max_backlog": max(backlog),
        "total_backlog": sum(backlog),
        "max_share": max(served) / reqs,
        "skew": max(served) / mean_served,
        "hot_holders": sum(0 in c for c in caches),
    }


# %%
results = {p: replay(p) for p in ("random", "hash", "affinity", "cache_aware", "spill")}
for p, r in results.items():
    claim(f"{p}_hit_rate", r["hit"], unit="fraction")
    claim(f"{p}_max_backlog", r["max_backlog"], unit="steps")
    claim(f"{p}_load_skew", r["skew"], unit="x")
claim("policies", len(results))
claim("utilisation_all_hit", arrivals * hit_cost / (replicas * service), unit="fraction")
claim("utilisation_all_miss", arrivals * (hit_cost + miss_cost) / (replicas * service), unit="fraction")
rnd, hsh, aff, ca, sp = (results[p] for p in ("random", "hash", "affinity", "cache_aware", "spill"))
check(aff["max_backlog"] > 1000, "matching without the balance guard piles the hot prefix onto its holder")
check(rnd["hit"] < hsh["hit"] and rnd["max_backlog"] > 1000, "random routing misses enough to overload every replica")
check(hsh["hit"] > 0.9 and hsh["max_backlog"] > 1000, "prefix hash hits but overloads the hot prefix's owner")
check(ca["hit"] < aff["hit"] - 0.2, "the global guard, once tripped, routes by queue alone and gives up hits")
check(sp["hit"] > 0.85 and sp["max_backlog"] < 100, "spilling only the hot prefix keeps both hits and queues")
check(popularity[0] * arrivals > 1, "the hottest prefix alone needs more than one replica's capacity")
claim("spill_hot_prefix_holders", sp["hot_holders"], unit="replicas")
claim("hash_hot_prefix_holders", hsh["hot_holders"], unit="replicas")
claim("hot_prefix_units_per_tick", popularity[0] * arrivals * hit_cost / service, unit="replicas")
