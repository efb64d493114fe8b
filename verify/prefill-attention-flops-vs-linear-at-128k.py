# %% [markdown]
# # Prefill FLOPs at 128K: attention against the linear layers
# Llama-3.1-70B's shape from the fact base (Meta sku_list.py). FLOP conventions: a linear layer costs 2 FLOP per
# weight per token; attention's two matmuls (QK^T and PV) cost 4 * N^2 * heads * head_dim for a non-causal
# sequence of N tokens, halved for causal masking, which is exactly how FlashAttention's own benchmark counts them.

# %%
from qbank.verify import check, claim, fact, given

L = fact("llama3_1_70b.num_hidden_layers", "layers")
d = fact("llama3_1_70b.hidden_size", "hidden")
h = fact("llama3_1_70b.num_attention_heads", "q_heads")
kvh = fact("llama3_1_70b.num_key_value_heads", "kv_heads")
hd = fact("llama3_1_70b.head_dim", "head_dim")
ffn = fact("llama3_1_70b.intermediate_size", "ffn")
n = given("context", 131072, unit="tokens", source="128K read as 2^17 tokens (Llama-3.1 max_position_embeddings)")
flop_per_weight = given("flop_per_weight", 2, unit="FLOP", source="one multiply-add per weight per token")
attn_coeff = given(
    "attn_matmul_coeff",
    4,
    source="github:Dao-AILab/flash-attention benchmarks/benchmark_flash_attention.py flops(): "
    "4 * batch * seqlen**2 * nheads * headdim // (2 if causal else 1)",
)
causal_div = given("causal_divisor", 2, source="same flops(): causal masking halves the count")
claim("causal_factor", 1 / causal_div, unit="x")
given("nodes", 1, unit="nodes", source="the question's hypothetical: one HGX H100 node")
tp = given("tp_gpus", 8, unit="GPUs", source="the question's hypothetical: one 8-GPU HGX H100 node")
peak = fact("h100_sxm.bf16_dense", "bf16_flops")
fa3_util = given(
    "fa3_utilization",
    0.75,
    unit="fraction",
    source="FlashAttention-3, arXiv:2407.08608 abstract: FP16 'up to 740 TFLOPs/s (75% utilization)' on H100",
)

# %% [markdown]
# ## Per layer: weights touched by every token, attention by every pair

# %%
w_layer = claim("weights_per_layer", 2 * d * d + 2 * d * kvh * hd + 3 * d * ffn, unit="params")
lin_tok = claim("linear_flop_per_token_layer", flop_per_weight * w_layer, unit="FLOP")
lin_layer = claim("linear_flop_layer_128k", lin_tok * n, unit="FLOP")
attn_layer = claim("attn_flop_layer_128k", attn_coeff * n**2 * h * hd / causal_div, unit="FLOP")
share = claim("attn_share_128k", attn_layer / (attn_layer + lin_layer), unit="fraction")
ratio = claim("attn_over_linear_128k", attn_layer / lin_layer, unit="x")
# GQA: the KV-head count never enters the attention FLOPs (every query head still scores every key)
check(h * hd == d, "query heads x head_dim = hidden size: attention FLOPs depend on d, not on the KV heads")

# %% [markdown]
# ## Where the two are equal
# Causal attention over N tokens: 2 * d * N^2 per layer; linear: 2 * W * N. Equal at N = W / d.
# A single token at position i costs 4 * d * i in attention, so it overtakes its own linear work at i = W / (2 d).

# %%
n_cross = claim("crossover_prompt_tokens", w_layer / d, unit="tokens")
i_cross = claim("crossover_position", w_layer / (2 * d), unit="tokens")
check(
    abs(attn_coeff * n_cross**2 * h * hd / causal_div - lin_tok * n_cross) < 1e-6 * lin_tok * n_cross,
    "equal at N = W/d",
)

last_tok = claim("last_token_attn_over_linear", attn_coeff * n * h * hd / lin_tok, unit="x")

# %% [markdown]
# ## A sweep of prompt lengths

# %%
for label, tokens in (("8k", 8192), ("32k", 32768), ("1m", 1048576)):
    a = attn_coeff * tokens**2 * h * hd / causal_div
    lin = lin_tok * tokens
    claim(f"attn_share_{label}", a / (a + lin), unit="fraction")
    given(f"context_{label}", tokens, unit="tokens", source="sweep point of the question")

# %% [markdown]
# ## The whole prefill on one 8-GPU node, at peak (a lower bound on time)

# %%
total = claim("prefill_flop_128k", L * (attn_layer + lin_layer), unit="FLOP")
attn_total = L * attn_layer
t_peak = claim("prefill_time_at_peak", total / (tp * peak * 1e12), unit="s")
t_attn_peak = claim("attn_time_at_peak", attn_total / (tp * peak * 1e12), unit="s")
t_attn_fa3 = claim("attn_time_at_fa3", attn_total / (tp * peak * 1e12 * fa3_util), unit="s")
noncausal_waste = claim("noncausal_extra_flop", L * attn_layer, unit="FLOP")
print(f"W/layer {w_layer:,}; attn/linear at 128K {ratio:.3f}; share {share:.3%}; crossover {n_cross:,.0f}")
print(f"total {total:.3e} FLOP; peak time {t_peak:.2f} s; attention {t_attn_peak:.2f} s ({t_attn_fa3:.2f} s at 75%)")
claim("noncausal_extra_share", noncausal_waste / total, unit="fraction")
claim("linear_share_128k", lin_layer / (attn_layer + lin_layer), unit="fraction")
check(noncausal_waste / total > 0.5, "a mask-blind kernel adds more than half the true total")
