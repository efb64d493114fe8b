# %% [markdown]
# # The KV cache under speculation: lookahead slots, rollback, and what may be cached
# Llama-3.1-70B target / Llama-3.1-8B draft KV sizes (facts.yaml derived entries, bf16), vLLM block size 16
# (vllm/config/cache.py DEFAULT_BLOCK_SIZE via facts.yaml). A paged block table is simulated under random
# accept lengths to check that truncating after each verify keeps exactly ceil(len / block) blocks.

# %%
import random

from qbank.verify import check, claim, fact, given

kv70 = fact("derived.kv_bytes_per_token_llama31_70b_bf16", "kv_target_per_token")
kv8 = fact("derived.kv_bytes_per_token_llama31_8b_bf16", "kv_draft_per_token")
block = int(fact("vllm.block_size_default", "block_size"))
gamma = int(given("gamma", 4, unit="tokens", source="draft length"))
batch = int(given("batch", 256, unit="requests", source="example decode batch"))
gpus = given("tp_gpus", 4, unit="GPUs", source="assumed TP=4 for the 70B target")
bw = fact("h100_sxm.hbm_bandwidth", "hbm_bw")

lookahead = claim("lookahead_bytes_per_request", gamma * kv70, unit="B")
lookahead_batch = claim("lookahead_bytes_batch", batch * gamma * kv70, unit="B")
draft_kv_req = claim("draft_lookahead_bytes_per_request", gamma * kv8, unit="B")

# %% [markdown]
# ## Tree compaction: copying the accepted path's KV rows into contiguous slots

# %%
accepted = given("accepted_tokens", 4, unit="tokens", source="example accepted path length")
copy_bytes = claim("compaction_bytes_batch", batch * accepted * kv70, unit="B")
copy_time = claim("compaction_time", 2 * copy_bytes / (gpus * bw * 1e12), unit="s")  # read + write
target_params = given(
    "target_params",
    70.55e9,
    unit="params",
    source="Llama-3.1-70B count from the sku_list.py config: 80 layers x (attention + MLP) + untied embedding and head",
)
step = claim("decode_step_time", 2 * target_params / (gpus * bw * 1e12), unit="s")
check(copy_time / step < 0.01, "compaction is under 1% of a weight-bound decode step")
share = claim("compaction_share_of_step", copy_time / step, unit="fraction")

# %% [markdown]
# ## Paged rollback: allocate for gamma+1 positions, keep prefix + accepted + bonus, free emptied blocks

# %%
rng = random.Random(0)
length, blocks, worst, freed = 100, -(-100 // block), 0, 0
ok = True
for _ in range(2000):
    need = -(-(length + gamma + 1) // block)  # room for the verify pass's writes
    worst = max(worst, need - -(-length // block))
    blocks = max(blocks, need)
    k = rng.choice([0, 0, 1, 2, 3, 4, 4])  # accepted drafts this step
    length += k + 1  # + the target's own token
    keep = -(-length // block)
    freed += blocks - keep
    blocks = keep
    ok &= blocks == -(-length // block)
check(ok, "after every rollback the table holds exactly ceil(len / block) blocks")
worst_extra = claim("worst_extra_blocks_per_request", worst, unit="blocks")
check(worst_extra == -(-(gamma + 1) // block), "a verify pass needs at most ceil((gamma+1)/block) new blocks")
steps = given("sim_steps", 2000, unit="steps", source="simulated verify steps")
claim("blocks_freed_per_step", freed / steps, unit="blocks")
print(lookahead, lookahead_batch, draft_kv_req, worst_extra, copy_time, step, share)
