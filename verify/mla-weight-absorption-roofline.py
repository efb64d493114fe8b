# %% [markdown]
# # MLA weight absorption: the identity, the bill, and the roofline regime
# DeepSeek-V3's MLA dimensions come from its `config_671B.json` (facts file). Absorption folds W_UK into the
# query and W_UV after the attention sum, so decode attends directly over the cached latent c (512) and the
# shared RoPE key (64). We (1) check the identity numerically, (2) count FLOPs and bytes per cached token,
# (3) place the kernel on the H100 roofline against Llama-3.1-70B's GQA.

# %%
import torch

from qbank.verify import check, claim, fact, given, kernel_check

n_h = fact("deepseek_v3.num_attention_heads", "mla_heads")
d_c = fact("deepseek_v3.kv_lora_rank", "kv_lora_rank")
d_r = fact("deepseek_v3.qk_rope_head_dim", "rope_dim")
d_nope = fact("deepseek_v3.qk_nope_head_dim", "nope_dim")
d_v = fact("deepseek_v3.v_head_dim", "v_dim")
mla_layers = fact("deepseek_v3.num_hidden_layers", "mla_layers")
F = fact("h100_sxm.bf16_dense", "h100_bf16", unit="TFLOP/s")
BW = fact("h100_sxm.hbm_bandwidth", "h100_hbm")
bf16 = given("bf16_bytes", 2, unit="B", source="bf16 is 2 bytes")
fp8 = given("fp8_bytes", 1, unit="B", source="FP8 is 1 byte")

# %% [markdown]
# ## The identity on small random tensors (float64 reference, float32 kernel)

# %%
g = torch.Generator().manual_seed(0)
H, C, R, D, T = 4, 32, 8, 16, 64
Wuk = torch.randn(H, D, C, generator=g, dtype=torch.float64) / C**0.5
Wuv = torch.randn(H, D, C, generator=g, dtype=torch.float64) / C**0.5
c = torch.randn(T, C, generator=g, dtype=torch.float64)
k_rope = torch.randn(T, R, generator=g, dtype=torch.float64)
q_nope = torch.randn(H, D, generator=g, dtype=torch.float64)
q_rope = torch.randn(H, R, generator=g, dtype=torch.float64)
scale = (D + R) ** -0.5


def naive(q_nope, q_rope, c, k_rope, Wuk, Wuv):
    """Decompress K and V per head, then ordinary attention."""
    k = torch.einsum("hdc,tc->htd", Wuk, c)
    v = torch.einsum("hdc,tc->htd", Wuv, c)
    s = (torch.einsum("hd,htd->ht", q_nope, k) + q_rope @ k_rope.T) * scale
    return torch.einsum("ht,htd->hd", s.softmax(-1), v)


def absorbed(q_nope, q_rope, c, k_rope, Wuk, Wuv):
    """Fold W_UK into the query and W_UV after the sum: attend over the latent only."""
    q_lat = torch.einsum("hd,hdc->hc", q_nope, Wuk)
    s = (q_lat @ c.T + q_rope @ k_rope.T) * scale
    o_lat = s.softmax(-1) @ c
    return torch.einsum("hc,hdc->hd", o_lat, Wuv)


f32 = [x.float() for x in (q_nope, q_rope, c, k_rope, Wuk, Wuv)]
kernel_check(
    "mla_absorbed_vs_naive", absorbed, lambda *a: naive(*[x.double() for x in a]).float(), *f32, rtol=1e-4, atol=1e-5
)

# %% [markdown]
# ## FLOPs and bytes per cached token, per layer, per query token

# %%
mla_flops = claim("mla_absorbed_flops_per_cached_token", 2 * n_h * ((d_c + d_r) + d_c), unit="FLOP")
mla_bytes = claim("mla_bytes_per_cached_token", (d_c + d_r) * bf16, unit="B")
mla_ai = claim("mla_intensity_bf16", mla_flops / mla_bytes)
mla_ai_fp8 = claim("mla_intensity_fp8_cache", mla_flops / ((d_c + d_r) * fp8))
ridge = claim("h100_ridge", F * 1e12 / (BW * 1e12))
check(mla_ai < ridge < mla_ai_fp8, "BF16-cache MLA sits just under the ridge, FP8-cache MLA above it")

kv_heads = fact("llama3_1_70b.num_key_value_heads", "gqa_kv_heads")
q_heads = fact("llama3_1_70b.num_attention_heads", "gqa_q_heads")
hd = fact("llama3_1_70b.head_dim", "gqa_head_dim")
gqa_layers = fact("llama3_1_70b.num_hidden_layers", "gqa_layers")
group = claim("gqa_group", q_heads / kv_heads, unit="heads")
gqa_flops = claim("gqa_flops_per_cached_token", 2 * q_heads * (hd + hd), unit="FLOP")
gqa_bytes = claim("gqa_bytes_per_cached_token", kv_heads * 2 * hd * bf16, unit="B")
gqa_ai = claim("gqa_intensity", gqa_flops / gqa_bytes)
flop_ratio = claim("mla_over_gqa_flops", mla_flops / gqa_flops, unit="x")
byte_ratio = claim("gqa_over_mla_bytes", gqa_bytes / mla_bytes, unit="x")
ai_ratio = claim("mla_over_gqa_intensity", mla_ai / gqa_ai, unit="x")
check(gqa_ai == group, "GQA's intensity equals its group size (1 FLOP-pair per byte pair per query head)")
print(f"MLA {mla_flops:,.0f} FLOP / {mla_bytes:.0f} B = {mla_ai:.1f} (fp8 cache {mla_ai_fp8:.1f}); ridge {ridge:.1f}")
print(
    f"GQA {gqa_flops:,.0f} FLOP / {gqa_bytes:.0f} B = {gqa_ai:.1f}; "
    f"MLA/GQA flops {flop_ratio:.2f}x bytes {byte_ratio:.2f}x"
)

# %% [markdown]
# ## Two query tokens per step (MTP draft verified with the next token) double the intensity

# %%
mtp_tokens = given(
    "query_tokens_mtp",
    2,
    unit="tokens",
    source="DeepSeek-V3 MTP depth 1 (arXiv:2412.19437 §4.2): 2 query tokens per verify step",
)
mla_ai_mtp = claim("mla_intensity_bf16_2q", mla_ai * mtp_tokens)
check(mla_ai_mtp > ridge, "with two query tokens, BF16-cache MLA is compute-bound on H100")

# %% [markdown]
# ## Without absorption: decompress every cached token every step

# %%
decomp_flops = claim("decompress_flops_per_cached_token", 2 * d_c * n_h * (d_nope + d_v), unit="FLOP")
decomp_ratio = claim("decompress_over_absorbed", decomp_flops / mla_flops, unit="x")
mha_cache_bytes = claim("decompressed_cache_bytes_per_token_layer", n_h * ((d_nope + d_r) + d_v) * bf16, unit="B")
mha_cache_ratio = claim("decompressed_over_latent_bytes", mha_cache_bytes / mla_bytes, unit="x")
print(
    f"decompress {decomp_flops / 1e6:.1f} MFLOP ({decomp_ratio:.0f}x); "
    f"caching decompressed K/V {mha_cache_bytes:,.0f} B ({mha_cache_ratio:.0f}x)"
)

# %% [markdown]
# ## Time per step at 131,072 cached tokens, one sequence, full model (whole H100 for scale)

# %%
ctx = given("context", 131072, unit="tokens", source="128K read as 2^17 tokens")
seqs = given("batch_single", 1, unit="requests", source="one sequence per step: batch 1, the latency-bound end")
t_mem = claim("mla_step_memory_ms", seqs * mla_layers * ctx * mla_bytes / (BW * 1e12) * 1e3, unit="ms")
t_cmp = claim("mla_step_compute_ms", seqs * mla_layers * ctx * mla_flops / (F * 1e12) * 1e3, unit="ms")
print(f"attention per step: memory {t_mem:.2f} ms, compute {t_cmp:.2f} ms")

# %% [markdown]
# ## Dimensions the answer quotes, and heads per rank at TP8

# %%
claim("score_dot_length", d_c + d_r, unit="dims")
claim("qk_head_dim", d_nope + d_r, unit="dims")
tp = given("tp", 8, unit="GPUs", source="an 8-GPU tensor-parallel group")
claim("heads_per_rank_tp8", n_h / tp, unit="heads")
claim("mla_intensity_per_rank_tp8", mla_ai / tp)
