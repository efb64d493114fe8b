# %% [markdown]
# # How long a finished turn's KV survives in vLLM's prefix cache, and the hit rate of the next turn
# vLLM V1 keeps freed blocks in an LRU free queue and evicts from its head when it allocates
# (github:vllm-project/vllm docs/design/prefix_caching.md @01ff8bff: "Allocate new blocks by popping the heads of
# the free queue. If the head block is a cached block, this also evicts the block"). A block freed at time t is
# therefore evicted once the engine has allocated as many new blocks as the evictable part of the pool holds:
# with a steady allocation rate w (tokens/s) and E evictable tokens, a finished turn survives T_c = E / w.
# The next turn of that conversation hits if the user's think time is under T_c. Think times are exponential
# (an assumption, stated in the answer), so the hit rate is h = 1 − exp(−T_c / θ). A miss re-prefills the history,
# which allocates more blocks, raises w and shortens T_c: h is the fixed point of that loop.
# Running requests hold their blocks (reference count > 0), so they are not evictable: E = pool − running KV.

# %%
import itertools
import math

from dense_llama import llama, runtime_overheads

from qbank.verify import check, claim, fact, given

m = llama("llama3_1_70b")
layers, d, nq, nkv, hd, ffn, vocab = m.layers, m.d, m.nq, m.nkv, m.hd, m.ffn, m.vocab
util = fact("vllm.gpu_memory_utilization_default", "util")
cuda_total = fact("h100_sxm.cuda_total_memory", "cuda_total")
tp = given("tp_gpus", 8, unit="GPUs", source="the question's hypothetical: Llama-3.1-70B at TP=8 on one H100 node")
overheads = runtime_overheads()
history = given("history_tokens", 4000, unit="tokens", source="the question's hypothetical: mean history at a turn")
user_tokens = given("user_tokens_per_turn", 200, unit="tokens", source="the question's hypothetical")
reply_tokens = given("reply_tokens_per_turn", 400, unit="tokens", source="the question's hypothetical")
new_tokens = claim("new_tokens_per_turn", user_tokens + reply_tokens, unit="tokens")
turn_time = given("turn_duration", 12, unit="s", source="the question's hypothetical: prefill plus 400 tokens at ~33/s")
think = given("mean_think_time", 60, unit="s", source="the question's hypothetical: users reply after 60 s on average")
rate = given("turn_rate", 10, unit="requests", source="the question's hypothetical: 10 turns arrive per second")

# %% [markdown]
# ## The pool and what running requests pin

# %%
params = m.params
kv_tok = 2 * layers * nkv * hd * 2
pool = claim("pool_bytes", tp * (util * cuda_total - 2 * params / tp - overheads), unit="B")
pool_tokens = claim("pool_tokens", pool / kv_tok, unit="tokens")
running = claim("running_requests", rate * turn_time, unit="requests")
pinned = claim("pinned_tokens", running * (history + new_tokens), unit="tokens")
check(pinned < pool_tokens, "the running set fits in the pool")


def hit_rate(turns_per_s: float, pool_tok: float) -> tuple[float, float]:
    """Fixed point (h, T_c) of h = 1 - exp(-T_c/think), T_c = E / (rate * (new + (1 - h) * history))."""
    evictable = pool_tok - turns_per_s * turn_time * (history + new_tokens)
    if evictable <= 0:
        return 0.0, 0.0
    lo, hi = 0.0, 1.0
    for _ in range(200):  # g(h) = 1 - exp(-T_c(h)/think) - h is decreasing in h: bisect
        mid = (lo + hi) / 2
        t_c = evictable / (turns_per_s * (new_tokens + (1 - mid) * history))
        if 1 - math.exp(-t_c / think) > mid:
            lo = mid
        else:
            hi = mid
    h = (lo + hi) / 2
    return h, evictable / (turns_per_s * (new_tokens + (1 - h) * history))


# %% [markdown]
# ## Naive residence time (every turn hits) against the fixed point

# %%
evictable = claim("evictable_tokens", pool_tokens - pinned, unit="tokens")
# A finished turn's blocks enter the free queue together, so eviction passes through one conversation in a
# window that is this share of its survival time: partial hits (head kept, tail gone) are that rare, and the
# model counts a turn as a whole hit or a whole miss.
claim("conversation_share_of_queue", (history + new_tokens) / evictable, unit="fraction")
alloc_all_hit = claim("alloc_rate_all_hit", rate * new_tokens, unit="tokens/s")
tc_naive = claim("residence_naive", evictable / alloc_all_hit, unit="s")
claim("hit_rate_naive", 1 - math.exp(-tc_naive / think), unit="fraction")
h, t_c = hit_rate(rate, pool_tokens)
claim("hit_rate", h, unit="fraction")
claim("residence", t_c, unit="s")
claim("alloc_rate", rate * (new_tokens + (1 - h) * history), unit="tokens/s")
check(abs(1 - math.exp(-t_c / think) - h) < 1e-6, "the fixed point is consistent")
claim("prefill_tokens_per_turn", user_tokens + (1 - h) * history, unit="tokens")

# %% [markdown]
# ## The cliff: hit rate against load, and the FP8-cache remedy


# %%
def crossings(turns_per_s: float, pool_tok: float) -> int:
    """How many times h -> 1 - exp(-T_c(h)/think) crosses the diagonal on a 1,000-point grid."""
    e = pool_tok - turns_per_s * turn_time * (history + new_tokens)

    def g(x: float) -> float:
        return 1 - math.exp(-e / (turns_per_s * (new_tokens + (1 - x) * history)) / think) - x

    xs = [i / 1000 for i in range(1001)]
    return sum((g(a) > 0) != (g(b) > 0) for a, b in itertools.pairwise(xs))


for r in (7, 8, 12):
    check(crossings(r, pool_tokens) == 1, f"one fixed point at {r} turns/s: the bisection found it")
    hr, tc = hit_rate(r, pool_tokens)
    claim(f"rate_{r}", r, unit="requests")
    claim(f"hit_rate_at_{r}", hr, unit="fraction")
    claim(f"residence_at_{r}", tc, unit="s")
check(crossings(rate, pool_tokens) == 1, "one fixed point at the base rate")
miss_alloc = claim("miss_alloc_tokens", history + new_tokens, unit="tokens")
claim("miss_alloc_ratio", miss_alloc / new_tokens, unit="x")
claim("hit_drop_7_to_8", hit_rate(7, pool_tokens)[0] - hit_rate(8, pool_tokens)[0], unit="fraction")
check(
    hit_rate(8, pool_tokens)[0] < 0.65 * hit_rate(7, pool_tokens)[0],
    "one more turn per second costs a third of the hits",
)
fp8_tokens = claim("pool_tokens_fp8", pool / (kv_tok / 2), unit="tokens")
claim("fp8_token_factor", fp8_tokens / pool_tokens, unit="x")
claim("fp8_running_bytes_factor", (kv_tok / 2) / kv_tok, unit="x")
h8, t8 = hit_rate(rate, fp8_tokens)
claim("hit_rate_fp8", h8, unit="fraction")
claim("residence_fp8", t8, unit="s")
h8_12, _ = hit_rate(12, fp8_tokens)
claim("hit_rate_fp8_at_12", h8_12, unit="fraction")
check(h8 > h, "an FP8 cache raises the hit rate")
