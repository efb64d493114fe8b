# %% [markdown]
# # Split-KV decode attention: how many splits FlashAttention picks, and what one CTA per head costs
# Llama-3.1-70B (facts.yaml) in bf16 at TP8 on H100 SXM: 1 KV head and 8 query heads per GPU. The split rule
# is FlashAttention-2's `num_splits_heuristic` and `set_params_splitkv` (github:Dao-AILab/flash-attention
# csrc/flash_attn/flash_api.cpp @00979f57), transcribed below: block_n = 128 keys for head_dim 128, the SM
# count doubled ("128 threads per block"), at most 128 splits, no split once batch x heads x m_blocks fills
# 80% of that, else the fewest eligible splits reaching 85% of the best wave efficiency. For decode with GQA,
# `mha_fwd` swaps the query-head group into the sequence dimension (seqlenq_ngroups_swapped), so the head
# count the heuristic sees is the KV-head count and m_blocks = ceil(8 / 64) = 1.

# %%
import math

from qbank.verify import check, claim, fact, given

L = fact("llama3_1_70b.num_hidden_layers", "layers")
d = fact("llama3_1_70b.hidden_size", "hidden")
heads = fact("llama3_1_70b.num_attention_heads", "q_heads")
kvh = fact("llama3_1_70b.num_key_value_heads", "kv_heads")
hd = fact("llama3_1_70b.head_dim", "head_dim")
ffn = fact("llama3_1_70b.intermediate_size", "ffn")
vocab = fact("llama3_1_70b.vocab_size", "vocab")
ctx_max = fact("llama3_1_8b.max_position_embeddings", "max_context")
bw = fact("h100_sxm.hbm_bandwidth", "hbm_bw") * 1e12
sms = given(
    "h100_sms", 132, unit="SMs",
    source="CUDA deviceQuery, H100 80GB HBM3 (8x H100 SXM): '(132) Multiprocessors' "
    "(github:thamada/nvidia-smi nvsim/H100SXMx8_deviceQuery.py @03fbe6e6)",
)
tp = given("tp_gpus", 8, unit="GPUs", source="the question's hypothetical: Llama-3.1-70B at TP8 on one HGX H100")
block_n = given(
    "block_n", 128, unit="tokens", source="flash_api.cpp set_params_splitkv: block_n = 128 for head_dim <= 128"
)
max_splits = given(
    "max_splits", 128, source="flash_api.cpp: num_splits_heuristic(..., 128); TORCH_CHECK(num_splits <= 128)"
)
slots_per_sm = given("ctas_per_sm_in_heuristic", 2, unit="slots", source="flash_api.cpp: multiProcessorCount * 2")
given("threads_per_block", 128, unit="threads", source="flash_api.cpp comment: 'using 128 threads per block'")
fill = given(
    "fill_threshold", 0.8, unit="fraction", source="flash_api.cpp: no split if batch_nheads_mblocks >= 0.8 * num_SMs"
)
near_best = given(
    "near_best", 0.85, unit="fraction", source="flash_api.cpp: smallest split within 85% of the best efficiency"
)
kv_heads_gpu = claim("kv_heads_per_gpu", kvh / tp, unit="heads")
q_heads_gpu = claim("q_heads_per_gpu", heads / tp, unit="heads")
check(kv_heads_gpu == 1, "TP8 leaves exactly one KV head per GPU: no K/V replication")


def num_splits(batch_heads_mblocks: int, num_sms: int, n_blocks: int, cap: int) -> int:
    """FlashAttention-2's num_splits_heuristic, line for line."""
    if batch_heads_mblocks >= fill * num_sms:
        return 1
    cap = min(cap, num_sms, n_blocks)

    def eligible(s: int) -> bool:
        return s == 1 or math.ceil(n_blocks / s) != math.ceil(n_blocks / (s - 1))

    eff = []
    for s in range(1, cap + 1):
        waves = batch_heads_mblocks * s / num_sms
        eff.append(waves / math.ceil(waves) if eligible(s) else 0.0)
    best = max(eff)
    for s in range(1, cap + 1):
        if eligible(s) and eff[s - 1] >= near_best * best:
            return s
    return 1


heuristic_sms = int(claim("heuristic_slots", sms * slots_per_sm, unit="slots"))
given("single_batch", 1, unit="requests", source="the question's single long request")


def plan(batch: int, ctx: int) -> tuple[int, int, int]:
    n_blocks = math.ceil(ctx / block_n)
    bhm = int(batch * kv_heads_gpu * math.ceil(q_heads_gpu / 64))
    s = num_splits(bhm, heuristic_sms, n_blocks, int(max_splits))
    return s, bhm * s, math.ceil(n_blocks / s) * int(block_n)


# %% [markdown]
# ## The single long request (batch 1 at 128K)

# %%
kv_tok_layer_gpu = claim("kv_bytes_per_token_layer_gpu", 2 * kv_heads_gpu * hd * 2, unit="B")
splits_1, ctas_1, tokens_per_split_1 = plan(1, int(ctx_max))
claim("splits_b1_128k", splits_1, unit="chunks")
claim("ctas_b1_128k", ctas_1, unit="blocks")
claim("tokens_per_split_b1_128k", tokens_per_split_1, unit="tokens")
claim("kv_blocks_128k", math.ceil(ctx_max / block_n), unit="blocks")
claim("sms_busy_fraction_b1", ctas_1 / sms, unit="fraction")
kv_layer = claim("kv_bytes_layer_128k", ctx_max * kv_tok_layer_gpu, unit="B")
claim("kv_layer_seconds_full_bw", kv_layer / bw, unit="s")

# merge: out_accum [splits, batch, kv heads, q-group, head_dim] fp32 written and read, plus the LSEs
accum = claim("accum_bytes_layer", splits_1 * kv_heads_gpu * q_heads_gpu * (hd + 1) * 4, unit="B")
claim("accum_share_of_kv", 2 * accum / kv_layer, unit="fraction")

# %% [markdown]
# ## A bandwidth model for a partly occupied GPU
# Assumption (the question's, with its sensitivity below): a CTA draws at most m times an equal share of the
# chip's bandwidth, bw / SMs, and all CTAs together at most bw. m = 1 is "bandwidth scales with SMs busy";
# a single SM can draw more than its equal share, so m is swept.

# %%
share = bw / sms


def layer_time(cta_bytes: list[float], m: float) -> float:
    return max(sum(cta_bytes) / bw, max(cta_bytes) / (m * share))


m1 = given("m_equal_share", 1, unit="x", source="the question's assumption: a CTA gets an equal share of bandwidth")
m4 = given("m_generous", 4, unit="x", source="the question's sensitivity case: a CTA draws 4x its equal share")
unsplit_1 = claim("layer_seconds_unsplit_b1", layer_time([kv_layer], m1), unit="s")
unsplit_4 = claim("layer_seconds_unsplit_b1_m4", layer_time([kv_layer], m4), unit="s")
split_1 = claim("layer_seconds_split_b1", layer_time([kv_layer / splits_1] * splits_1, m1), unit="s")
weights_gpu = claim(
    "weight_bytes_per_gpu", 2 * (L * (d * (2 * d + 2 * kvh * hd) + 3 * d * ffn) + 2 * vocab * d) / tp, unit="B"
)
w_s = claim("weight_seconds_per_gpu", weights_gpu / bw, unit="s")
claim("embedding_share_of_weights", 2 * vocab * d / tp / weights_gpu, unit="fraction")
step_split = claim("step_seconds_split_b1", w_s + L * split_1, unit="s")
step_unsplit = claim("step_seconds_unsplit_b1", w_s + L * unsplit_1, unit="s")
step_unsplit4 = claim("step_seconds_unsplit_b1_m4", w_s + L * unsplit_4, unit="s")
claim("unsplit_over_split", step_unsplit / step_split, unit="x")
claim("unsplit_over_split_m4", step_unsplit4 / step_split, unit="x")
check(step_unsplit4 > 5 * step_split, "even at 4x its share one CTA per layer dominates the step")

# %% [markdown]
# ## The heuristic across batch and context

# %%
cases = [(1, 8192), (8, 32768), (32, 8192), (64, 8192), (128, 4096), (211, 2048), (212, 2048), (256, 2048)]
for b, c in cases:
    s, ctas, tps = plan(b, c)
    given(f"case_batch_{b}_{c}", b, unit="requests", source="table row")
    given(f"case_ctx_{b}_{c}", c, unit="tokens", source="table row")
    claim(f"splits_{b}_{c}", s, unit="chunks")
    claim(f"ctas_{b}_{c}", ctas, unit="blocks")
claim("no_split_batch", math.ceil(fill * heuristic_sms), unit="requests")
claim("wave_eff_211_one_split", 211 / heuristic_sms, unit="fraction")
check(plan(212, 2048)[0] == 1 and plan(211, 2048)[0] > 1, "the split switches off at batch 212 with one KV head")

# %% [markdown]
# ## One long request in a full batch
# 255 requests at 2K tokens and one at 128K: batch x heads = 256 >= 211.2, so no split; each request is one
# CTA and the long one reads 64 times the bytes of the others.

# %%
full = given("full_batch", 256, unit="requests", source="the question's hypothetical batch")
short = given("short_ctx", 2048, unit="tokens", source="the question's hypothetical short context")
s_full, blocks_full, _ = plan(int(full), int(ctx_max))
claim("mixed_blocks", blocks_full, unit="blocks")
check(s_full == 1, "a full batch gets no split whatever its longest context")
ctas = [short * kv_tok_layer_gpu] * (int(full) - 1) + [ctx_max * kv_tok_layer_gpu]
claim("short_requests", full - 1, unit="requests")
claim("kv_bytes_layer_short", short * kv_tok_layer_gpu, unit="B")
mixed = claim("layer_seconds_mixed", layer_time(ctas, m1), unit="s")
uniform = claim("layer_seconds_all_short", layer_time([short * kv_tok_layer_gpu] * int(full), m1), unit="s")
claim("mixed_over_all_short", mixed / uniform, unit="x")
mixed_ideal = claim("layer_seconds_mixed_balanced", sum(ctas) / bw, unit="s")
claim("mixed_over_balanced", mixed / mixed_ideal, unit="x")
claim("mixed_over_balanced_m4", layer_time(ctas, m4) / mixed_ideal, unit="x")
# KV for the batch must fit: per GPU, weights + KV of all sequences
kv_total = claim("kv_bytes_per_gpu_mixed", L * sum(ctas), unit="B")
budget = fact("vllm.gpu_memory_utilization_default", "util") * fact("h100_sxm.cuda_total_memory", "total")
check(weights_gpu + kv_total < budget, "the mixed batch fits on each GPU")
print(splits_1, ctas_1, tokens_per_split_1, step_split, step_unsplit, mixed, uniform)
