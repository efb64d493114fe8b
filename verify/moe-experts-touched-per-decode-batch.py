# %% [markdown]
# # Distinct experts touched by a decode batch, and the weight bytes a step reads
# DeepSeek-V3 config (official repo `config_671B.json`, via the fact base). Weights in FP8 (1 byte per
# parameter, the released format; block scales ignored). Routing model: each token picks 8 distinct
# experts of 256, and tokens route independently and uniformly (the balanced case; skew lowers the
# count). Expected distinct experts per layer for B tokens: E·(1 − (1 − k/E)^B).

# %%
import math

from qbank.verify import check, claim, fact, given

L = fact("deepseek_v3.num_hidden_layers", "layers")
dense_layers = fact("deepseek_v3.first_k_dense_replace", "dense_layers")
E = fact("deepseek_v3.n_routed_experts", "routed_experts")
k = fact("deepseek_v3.num_experts_per_tok", "top_k")
shared = fact("deepseek_v3.n_shared_experts", "shared_experts")
d = fact("deepseek_v3.hidden_size", "d_model")
ffn_dense = fact("deepseek_v3.intermediate_size", "dense_ffn")
ffn_moe = fact("deepseek_v3.moe_intermediate_size", "expert_ffn")
kv_rank = fact("deepseek_v3.kv_lora_rank", "kv_lora_rank")
q_rank = fact("deepseek_v3.q_lora_rank", "q_lora_rank")
rope = fact("deepseek_v3.qk_rope_head_dim", "rope_dim")
nope = fact("deepseek_v3.qk_nope_head_dim", "nope_dim")
v_dim = fact("deepseek_v3.v_head_dim", "v_dim")
heads = fact("deepseek_v3.num_attention_heads", "heads")
vocab = fact("deepseek_v3.vocab_size", "vocab")
total_readme = fact("deepseek_v3.total_params", "total_params_readme")
active_readme = fact("deepseek_v3.active_params_per_token", "active_params_readme")
h100_fp8 = fact("h100_sxm.fp8_dense", "h100_fp8")
h100_bw = fact("h100_sxm.hbm_bandwidth", "h100_bw")
fp8_bytes = given("fp8_bytes", 1, unit="B", source="FP8 stores 1 byte per parameter (E4M3)")
flop_per_byte = given("flops_per_weight_byte", 2, unit="FLOP", source="one multiply-add per FP8 weight byte per token")

# %% [markdown]
# ## Parameter inventory from the config

# %%
moe_layers = claim("moe_layers", L - dense_layers, unit="layers")
expert = claim("params_per_expert", 3 * d * ffn_moe, unit="params")
mla = (d * q_rank + q_rank * heads * (nope + rope) + d * (kv_rank + rope) + kv_rank * heads * (nope + v_dim)
       + heads * v_dim * d)
non_routed = claim("non_routed_params",
                   L * mla + dense_layers * 3 * d * ffn_dense + moe_layers * (shared * expert + E * d) + 2 * vocab * d,
                   unit="params")
routed_total = moe_layers * E * expert
active = claim("active_params", non_routed + moe_layers * k * expert, unit="params")
total = claim("total_params", non_routed + routed_total, unit="params")
check(abs(total - total_readme) / total_readme < 0.01, "config inventory within 1% of the README's 671B")
check(abs(active - active_readme) / active_readme < 0.02, "active inventory within 2% of the README's 37B")
sparsity = claim("total_over_active", total / active, unit="x")

# %% [markdown]
# ## Distinct experts and bytes per step

# %%
def touched(b: float) -> float:
    """Expected distinct routed experts per layer for b tokens."""
    return E * (1 - (1 - k / E) ** b)


batches = [int(given(f"batch_{b}", b, unit="tokens", source="example decode batch sizes (tokens per step)"))
           for b in (1, 8, 32, 64, 256, 1024)]
rows = {}
for b in batches:
    t = claim(f"experts_touched_b{b}", touched(b), unit="experts")
    step = claim(f"step_bytes_b{b}", (non_routed + moe_layers * t * expert) * fp8_bytes, unit="B")
    per_tok = claim(f"bytes_per_token_b{b}", step / b, unit="B")
    intensity = claim(f"intensity_b{b}", 2 * active * b / step, unit="x")  # FLOP per byte
    rows[b] = (t, step, per_tok, intensity)
check(rows[1][0] == k, "a single token touches exactly 8 experts")
half_experts = claim("half_experts", E / 2, unit="experts")
half_b = claim("batch_half_experts", math.log(0.5) / math.log(1 - k / E), unit="tokens")
frac_256 = claim("fraction_of_model_read_b256", rows[256][1] / (total * fp8_bytes), unit="fraction")
frac_64 = claim("fraction_of_model_read_b64", rows[64][1] / (total * fp8_bytes), unit="fraction")
frac_32 = claim("fraction_of_model_read_b32", rows[32][1] / (total * fp8_bytes), unit="fraction")
check(frac_32 > 0.5 and frac_64 < 0.9, "at tens of tokens per step most of the model is read for a few dozen tokens")
frac_8 = claim("fraction_of_model_read_b8", rows[8][1] / (total * fp8_bytes), unit="fraction")
frac_1 = claim("fraction_of_model_read_b1", rows[1][1] / (total * fp8_bytes), unit="fraction")
saving_8 = claim("dense_over_moe_bytes_b8", (total * fp8_bytes) / rows[8][1], unit="x")
saving_64 = claim("dense_over_moe_bytes_b64", (total * fp8_bytes) / rows[64][1], unit="x")
check(saving_8 > 4 and 1 < saving_64 < 1.2, "the byte saving is 4x at 8 tokens and nearly gone by 64")

# %% [markdown]
# ## Where the saving lives: FLOPs per token, hence the batch at which decode turns compute-bound
# Ridge point of an H100 in FP8: peak FLOP/s over HBM bytes/s. A dense 671B model in FP8 has intensity 2·B
# FLOP/byte; the MoE reads (almost) the same bytes at large batch but does total/active times fewer FLOPs.

# %%
ridge = claim("h100_fp8_ridge", h100_fp8 * 1e12 / (h100_bw * 1e12), unit="x")
dense_ridge_batch = claim("dense_ridge_batch", ridge / 2, unit="tokens")
moe_ridge_batch = claim("moe_ridge_batch", ridge * total / (2 * active), unit="tokens")
check(moe_ridge_batch > 10 * dense_ridge_batch, "the MoE stays bandwidth-bound to a batch 18x larger")
for b, r in rows.items():
    print(b, f"touched {r[0]:.3f} step {r[1]/1e9:.3f} GB per-token {r[2]/1e9:.4f} GB I={r[3]:.3f}")
print(f"total {total/1e9:.1f}B active {active/1e9:.2f}B nonrouted {non_routed/1e9:.2f}B expert {expert/1e6:.2f}M")
print(half_b, frac_64, frac_256, ridge, dense_ridge_batch, moe_ridge_batch, sparsity)
