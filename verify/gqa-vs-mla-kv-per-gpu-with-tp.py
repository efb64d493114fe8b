# %% [markdown]
# # GQA against MLA per GPU, with tensor parallelism
# GQA: Llama-3.1-70B (BF16) at TP8 on H100. MLA: DeepSeek-V3 (FP8 weights as released) at TP8 on H200, the
# smallest 8-GPU node it fits (671 GB exceeds the 626 GB an 8xH100 node gives vLLM at 0.92 of cudaMemGetInfo's total). vLLM v0.21 default utilization 0.92; activations
# ignored (ceilings). Under TP, GQA's KV heads split across ranks; MLA's latent is shared by all heads, so every
# rank caches the whole latent. "1M tokens" is read as 2^20.

# %%
from qbank.verify import check, claim, fact, given

util = fact("vllm.gpu_memory_utilization_default", "util")
h100 = fact("h100_sxm.hbm_capacity", "h100_gb")
h200 = fact("h200_sxm.hbm_capacity", "h200_gb")
h100_total = fact("h100_sxm.cuda_total_memory", "h100_cuda_total")  # what vLLM multiplies util by
h200_total = fact("h200_sxm.cuda_total_memory", "h200_cuda_total")
tp = fact("h100_sxm.nvlink_domain", "tp")
kv_gqa = fact("derived.kv_bytes_per_token_llama31_70b_bf16", "gqa_kv_per_token")
kv_mla = fact("derived.kv_bytes_per_token_deepseek_v3_mla_bf16", "mla_kv_per_token")
p70 = given(
    "params_70b", 70.55e9, unit="params", source="Llama-3.1-70B count from its config (recompute-vs-fetch script)"
)
p_ds = fact("deepseek_v3.total_params", "dsv3_params")
ctx = given("context_128k", 131072, unit="tokens", source="128K read as 2^17 tokens")
ctx_1m = given("context_1m", 2**20, unit="tokens", source="1M read as 2^20 tokens")
bf16 = given("bf16_bytes", 2, unit="B", source="bf16 is 2 bytes")
fp8 = given("fp8_bytes", 1, unit="B", source="FP8 (E4M3) is 1 byte")

# %%
model_ratio = claim("gqa_over_mla_per_token", kv_gqa / kv_mla, unit="x")
gqa_gpu = claim("gqa_per_gpu_per_token", kv_gqa / tp, unit="B")
mla_gpu = claim("mla_per_gpu_per_token", kv_mla, unit="B")
gpu_ratio = claim("mla_over_gqa_per_gpu", mla_gpu / gqa_gpu, unit="x")
check(model_ratio > 4 and gpu_ratio > 1.5, "MLA is 4x+ smaller per token but 1.5x+ larger per GPU at TP8")
dsv3_fits_h100 = claim("dsv3_fp8_weights", p_ds * fp8, unit="B")
h100_node_budget = claim("h100_node_vllm_budget", tp * h100_total * util, unit="B")
check(dsv3_fits_h100 > h100_node_budget, "DeepSeek-V3 FP8 weights exceed what vLLM may use on an 8xH100 node")

# %% [markdown]
# ## Budgets and tokens per replica

# %%
b_gqa = claim("gqa_budget_per_gpu", h100_total * util - p70 * bf16 / tp, unit="B")
b_mla = claim("mla_budget_per_gpu", h200_total * util - p_ds * fp8 / tp, unit="B")
tok_gqa = claim("gqa_tokens_per_replica", b_gqa / gqa_gpu, unit="tokens")
tok_mla = claim("mla_tokens_per_replica_tp", b_mla / mla_gpu, unit="tokens")
req_gqa = claim("gqa_128k_requests", tok_gqa / ctx, unit="requests")
req_mla = claim("mla_128k_requests_tp", tok_mla / ctx, unit="requests")
tok_mla_dp = claim("mla_tokens_per_node_dp_attention", tp * b_mla / kv_mla, unit="tokens")
req_mla_dp = claim("mla_128k_requests_dp", tok_mla_dp / ctx, unit="requests")
# what the earlier version got by reading the labels (80 GB, 141 GB) as decimal bytes
tok_gqa_label = claim("gqa_tokens_per_replica_if_label", (h100 * 1e9 * util - p70 * bf16 / tp) / gqa_gpu, unit="tokens")
tok_mla_label = claim("mla_tokens_per_replica_if_label", (h200 * 1e9 * util - p_ds * fp8 / tp) / mla_gpu, unit="tokens")
check(abs(tok_mla_label / tok_gqa_label - tok_mla / tok_gqa) < 0.05, "the MLA/GQA ratio barely moves")
print(f"budgets: GQA {b_gqa / 1e9:.2f} GB/GPU, MLA {b_mla / 1e9:.2f} GB/GPU")
print(
    f"tokens: GQA {tok_gqa:,.0f} ({req_gqa:.1f} req), MLA TP {tok_mla:,.0f} ({req_mla:.2f}), "
    f"MLA DP {tok_mla_dp:,.0f} ({req_mla_dp:.1f})"
)

# %% [markdown]
# ## The 1M-token request

# %%
gqa_1m = claim("gqa_1m_per_gpu", gqa_gpu * ctx_1m, unit="B")
mla_1m = claim("mla_1m_per_gpu", mla_gpu * ctx_1m, unit="B")
check(gqa_1m < b_gqa, "GQA's 1M request fits per GPU on H100")
check(mla_1m > b_mla, "MLA's 1M request does not fit per GPU on H200, under TP or DP attention")
claim("gqa_1m_budget_share", gqa_1m / b_gqa, unit="fraction")
claim("mla_1m_over_budget", mla_1m / b_mla, unit="x")
fp8_cache_ratio = claim("fp8_over_bf16_cache_bytes", fp8 / bf16, unit="x")
mla_1m_fp8 = claim("mla_1m_per_gpu_fp8", mla_1m * fp8_cache_ratio, unit="B")
check(mla_1m_fp8 < b_mla, "an FP8 latent cache fits the 1M request")
mla_1m_cp = claim("mla_1m_per_gpu_context_parallel", mla_1m / tp, unit="B")
claim("mla_max_tokens_per_gpu", b_mla / kv_mla, unit="tokens")
print(
    f"1M: GQA {gqa_1m / 1e9:.1f} GB/GPU of {b_gqa / 1e9:.1f}; MLA {mla_1m / 1e9:.1f} GB of {b_mla / 1e9:.1f}; "
    f"FP8 {mla_1m_fp8 / 1e9:.1f}; CP8 {mla_1m_cp / 1e9:.1f}"
)

# %% [markdown]
# ## Shapes and ratios the answer quotes

# %%
fact("llama3_1_70b.num_hidden_layers", "gqa_layers")
gqa_kv_heads = fact("llama3_1_70b.num_key_value_heads", "gqa_kv_heads")
claim("gqa_kv_heads_per_rank", gqa_kv_heads / tp, unit="heads")
fact("deepseek_v3.num_hidden_layers", "mla_layers")
fact("deepseek_v3.kv_lora_rank", "latent_dim")
fact("deepseek_v3.qk_rope_head_dim", "rope_dim")
mla_heads = fact("deepseek_v3.num_attention_heads", "mla_heads")
claim("mla_heads_per_rank", mla_heads / tp, unit="heads")
claim("h200_extra_memory", h200 / h100 - 1, unit="fraction")
claim("mla_over_gqa_tokens", tok_mla / tok_gqa, unit="fraction")
