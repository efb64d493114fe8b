# %% [markdown]
# # Prefix-cache eviction that strands blocks, and the order that cannot
# A block-level prefix cache (vLLM's design: a block's hash chains its parent's, only full blocks are cached,
# free blocks sit in an LRU queue and are evicted from its head) serves a seeded multi-turn chat workload.
# Lookups walk from the first block and stop at the first miss, so a resident block whose ancestor was evicted
# can never be hit: it is stranded. We compare three eviction orders on the same request stream:
# - `head_first`: a finished request's blocks enter the LRU queue in prefix order (the head is evicted first);
# - `tail_first`: they enter in reverse order, as vLLM frees them, so a chain's tail is always older than its head;
# - `leaf_only`: evict the least recently used block that has no cached child (SGLang's radix-tree rule).
# A FIFO order (queued at insertion, never refreshed by a hit) is run for contrast.
#
# Seed check: the seed says a wrong eviction order strands gigabytes "that stay resident". Under plain LRU with the
# wrong tie order, the stranded blocks are next in line and the leak is transient (measured below: gigabytes on a
# real pool, but recycled); it becomes permanent only under policies that keep stranded blocks warm. The worst case
# for a single eviction (a full-context chain minus its first block) is derived at the end.

# %%
import random
from collections import OrderedDict

from qbank.verify import check, claim, fact, given

n_convs = given("conversations", 300, unit="requests", source="synthetic workload size (seeded)")
n_requests = given("requests", 4000, unit="requests", source="synthetic workload length (seeded)")
sys_blocks = given("system_prompt_blocks", 32, unit="blocks", source="synthetic: 512-token system prompts, 4 variants")
n_sys = given("system_prompts", 4, source="synthetic: 4 system prompt variants")
user_blocks = given("user_blocks_per_turn", 4, unit="blocks", source="synthetic: 64-token user turns")
reply_blocks = given("reply_blocks_per_turn", 8, unit="blocks", source="synthetic: 128-token replies")
max_turns = given("turns_per_conversation", 10, source="synthetic: a conversation restarts after 10 turns")
capacity = given(
    "cache_capacity_blocks", 4000, unit="blocks", source="synthetic pool size, about a tenth of the working set"
)


def run(policy: str) -> tuple[float, float, float]:
    """Replay the seeded workload under one eviction order; return hit rate, mean and max stranded share."""
    rng = random.Random(7)
    key_of: dict[int, int] = {}  # resident physical block -> its chained hash (a logical label here)
    parent_key: dict[int, int | None] = {}  # resident physical block -> parent's hash
    table: dict[int, int] = {}  # hash -> physical block that lookups find
    kids: dict[int, int] = {}  # hash -> resident blocks whose parent is this hash
    lru: OrderedDict[int, None] = OrderedDict()  # evictable (ref count 0) blocks, least recent first
    history: dict[int, list[int]] = {}
    turns: dict[int, int] = {}
    sys_chain = [[(-1 - s) * 1000 - i for i in range(int(sys_blocks))] for s in range(int(n_sys))]
    next_label = 1
    next_phys = 0
    hits = total = 0
    samples: list[float] = []
    weights = [1 / (c + 1) for c in range(int(n_convs))]  # Zipf-like popularity

    def evict_one() -> None:
        if policy == "leaf_only":
            victim = next(b for b in lru if kids.get(key_of[b], 0) == 0 or table.get(key_of[b]) != b)
        else:
            victim = next(iter(lru))
        del lru[victim]
        k, pk = key_of.pop(victim), parent_key.pop(victim)
        if table.get(k) == victim:
            del table[k]
        if pk is not None:
            kids[pk] -= 1

    for step in range(int(n_requests)):
        c = rng.choices(range(int(n_convs)), weights)[0]
        if c not in history or turns[c] >= max_turns:
            history[c] = list(sys_chain[c % int(n_sys)])
            turns[c] = 0
        turns[c] += 1
        new_user = list(range(next_label, next_label + int(user_blocks)))
        next_label += int(user_blocks)
        prompt = history[c] + new_user
        hit = 0  # longest cached prefix: the walk stops at the first miss
        while hit < len(prompt) and prompt[hit] in table:
            hit += 1
        hits += hit
        total += len(prompt)
        for k in prompt[:hit]:
            lru.pop(table[k], None)  # in use: ref count > 0
        reply = list(range(next_label, next_label + int(reply_blocks)))
        next_label += int(reply_blocks)
        chain = prompt + reply
        phys = [table[k] for k in prompt[:hit]]
        for i in range(hit, len(chain)):
            while len(key_of) >= capacity:
                evict_one()
            b, next_phys = next_phys, next_phys + 1
            pk = chain[i - 1] if i > 0 else None
            key_of[b], parent_key[b] = chain[i], pk
            table[chain[i]] = b  # a stranded older copy with this hash stays resident as garbage
            if pk is not None:
                kids[pk] = kids.get(pk, 0) + 1
            phys.append(b)
            if policy == "fifo":
                lru[b] = None  # queued once, at insertion; hits do not refresh it
        if policy != "fifo":
            for b in phys if policy == "head_first" else reversed(phys):
                lru[b] = None
                lru.move_to_end(b)
        history[c] = chain
        if step >= int(n_requests) // 2 and step % 20 == 0:
            samples.append(1 - _count_reachable(key_of, parent_key, table) / capacity)
    return hits / total, sum(samples) / len(samples), max(samples)


def _count_reachable(key_of: dict[int, int], parent_key: dict[int, int | None], table: dict[int, int]) -> int:
    """Resident blocks a lookup can reach: the table points at them and every ancestor hash is cached."""
    memo: dict[int, bool] = {}

    def ok(k: int) -> bool:
        path = []
        while k not in memo:
            b = table.get(k)
            if b is None:
                memo[k] = False
                break
            pk = parent_key[b]
            path.append(k)
            if pk is None:
                memo[k] = True
                break
            k = pk
        val = memo[k]
        for x in path:
            memo[x] = val
        return val

    return sum(1 for b, k in key_of.items() if table.get(k) == b and ok(k))


results = {pol: run(pol) for pol in ("head_first", "tail_first", "leaf_only", "fifo")}
for pol, (hr, st, mx) in results.items():
    print(f"{pol:10s} hit rate {hr:.3f}  stranded mean {st:.3f}  max {mx:.3f}")

hr_head, st_head, mx_head = results["head_first"]
hr_tail, st_tail, mx_tail = results["tail_first"]
hr_leaf, st_leaf, mx_leaf = results["leaf_only"]
hr_fifo, st_fifo, mx_fifo = results["fifo"]
claim("hit_rate_head_first", hr_head, unit="fraction")
claim("hit_rate_tail_first", hr_tail, unit="fraction")
claim("hit_rate_leaf_only", hr_leaf, unit="fraction")
claim("hit_rate_fifo", hr_fifo, unit="fraction")
claim("stranded_mean_head_first", st_head, unit="fraction")
claim("stranded_max_head_first", mx_head, unit="fraction")
claim("stranded_mean_tail_first", st_tail, unit="fraction")
claim("stranded_max_tail_first", mx_tail, unit="fraction")
claim("stranded_mean_leaf_only", st_leaf, unit="fraction")
claim("stranded_max_leaf_only", mx_leaf, unit="fraction")
claim("stranded_mean_fifo", st_fifo, unit="fraction")
claim("stranded_max_fifo", mx_fifo, unit="fraction")
check(mx_tail == 0 and mx_leaf == 0, "tail-first LRU and leaf-only eviction never strand a block")
check(mx_head > 0, "head-first LRU strands blocks")
check(hr_fifo < hr_tail - 0.2, "FIFO without refresh on hit loses a large share of hits")

# %% [markdown]
# ## In gigabytes: Llama-3.1-70B on an 8-GPU H100 node (TP8), vLLM v0.21 defaults
# Pool = 8 x (80 GB x 0.92 - weights/8); activations are ignored, so this is a ceiling.

# %%
block = fact("vllm.block_size_default", "block_tokens", unit="tokens")
kv_tok = fact("derived.kv_bytes_per_token_llama31_70b_bf16", "kv_per_token")
hbm = fact("h100_sxm.hbm_capacity", "hbm_gb")
cuda_total = fact("h100_sxm.cuda_total_memory", "cuda_total_bytes")  # what vLLM multiplies util by
util = fact("vllm.gpu_memory_utilization_default", "util")
gpus = fact("h100_sxm.nvlink_domain", "gpus")
params70 = given(
    "llama70b_params",
    70.55e9,
    unit="params",
    source="Llama-3.1-70B count from its config (derived in the recompute-vs-fetch question's script)",
)
block_bytes = claim("block_bytes", block * kv_tok, unit="B")
check(block_bytes == 5 * 2**20, "a 16-token block of the 70B model is 5 MiB")
act_peak = given("activation_peak", 2.5e9, unit="B", source="example figure per GPU, the same as in the "
                 "max-concurrent-requests-memory-budget answer; vLLM measures it in a dummy run at startup")
non_torch = given("non_torch", 1.0e9, unit="B", source="example figure per GPU (CUDA context, NCCL), the same as in "
                  "the max-concurrent-requests-memory-budget answer; vLLM measures it from cudaMemGetInfo")
graphs = given("cudagraph_estimate", 0.5e9, unit="B", source="example figure per GPU, the same as in the "
               "max-concurrent-requests-memory-budget answer; estimated by a dummy capture since v0.21")
overheads = claim("runtime_overheads_per_gpu", act_peak + non_torch + graphs, unit="B")
pool = claim("pool_bytes", gpus * (cuda_total * util - params70 * 2 / gpus - overheads), unit="B")
pool_blocks = claim("pool_blocks", pool // block_bytes, unit="blocks")
claim("stranded_mean_bytes", st_head * pool_blocks * block_bytes, unit="B")
pool_old = gpus * (cuda_total * util - params70 * 2 / gpus)
claim("stranded_mean_bytes_before_overheads", st_head * (pool_old // block_bytes) * block_bytes, unit="B")
claim("stranded_max_bytes", mx_head * pool_blocks * block_bytes, unit="B")

# %% [markdown]
# ## Worst case: evict the first block of a full-context conversation

# %%
ctx = fact("llama3_1_8b.max_position_embeddings", "context")  # Llama 3.1's 131,072 tokens, shared by all sizes
chain = claim("chain_blocks", ctx / block, unit="blocks")
claim("worst_stranded_blocks", chain - 1, unit="blocks")
worst = claim("worst_stranded_bytes", (chain - 1) * block_bytes, unit="B")
claim("chain_bytes", chain * block_bytes, unit="B")
print(
    f"pool {pool / 1e9:.0f} GB = {pool_blocks:.0f} blocks; "
    f"stranded mean {st_head * pool_blocks * block_bytes / 2**30:.1f} GiB,"
    f" max {mx_head * pool_blocks * block_bytes / 2**30:.1f} GiB; worst single eviction {worst / 2**30:.3f} GiB"
)
