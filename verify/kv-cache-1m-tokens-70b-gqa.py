# %% [markdown]
# # KV cache and prefill FLOPs of a 1M-token request on Llama-3.1-70B
# Inputs: Llama-3.1-70B's config (Meta's llama-models `sku_list.py`, via the project fact base), a bf16
# cache, and H100 SXM datasheet figures. "1M tokens" is read both ways: 2^20 = 1,048,576 tokens (the
# reading under which the seed's "320 GiB" is exact) and 10^6 tokens (305 GiB). The answer states both.

# %%
from qbank.verify import check, claim, fact, given

layers = fact("llama3_1_70b.num_hidden_layers", "layers")
d_model = fact("llama3_1_70b.hidden_size", "d_model")
q_heads = fact("llama3_1_70b.num_attention_heads", "q_heads")
kv_heads = fact("llama3_1_70b.num_key_value_heads", "kv_heads")
head_dim = fact("llama3_1_70b.head_dim", "head_dim")
ffn = fact("llama3_1_70b.intermediate_size", "ffn_dim")
vocab = fact("llama3_1_70b.vocab_size", "vocab")
native_ctx = fact("llama3_1_8b.max_position_embeddings", "native_context")  # same 128K for the 70B (sku_list)
bytes_bf16 = given("bytes_bf16", 2, unit="B", source="bf16 stores 2 bytes per value")
kv_tensors = given("kv_tensors", 2, source="one key and one value vector per token, head and layer")
n_bin = given("context_tokens_binary", 2**20, unit="tokens", source="1M read as 2^20 tokens")
n_dec = given("context_tokens_decimal", 10**6, unit="tokens", source="1M read as 10^6 tokens")
gpus = fact("h100_sxm.nvlink_domain", "gpus")
hbm = fact("h100_sxm.hbm_capacity", "hbm_gb")
bf16_peak = fact("h100_sxm.bf16_dense", "bf16_peak")

# %% [markdown]
# ## KV bytes
# Per token: 2 (K and V) × layers × KV heads × head_dim × 2 bytes.

# %%
kv_tok = claim("kv_bytes_per_token", kv_tensors * layers * kv_heads * head_dim * bytes_bf16, unit="B")
kv_bin = claim("kv_bytes_2p20", kv_tok * n_bin, unit="B")
kv_dec = claim("kv_bytes_1e6", kv_tok * n_dec, unit="B")
kv_native = claim("kv_bytes_native_128k", kv_tok * native_ctx, unit="B")
check(kv_tok == 320 * 2**10, "320 KiB per token")
check(kv_bin == 320 * 2**30, "seed's 320 GiB holds exactly for 2^20 tokens")
check(round(kv_dec / 2**30) == 305, "305 GiB for 10^6 tokens")
check(kv_native == 40 * 2**30, "40 GiB at the native 131,072-token context")

# %% [markdown]
# ## Prefill FLOPs: linear layers against attention
# FLOP model (multiply-add = 2 FLOPs): every weight matrix costs 2 FLOPs per parameter per token; the
# embedding lookup is not a matmul, the LM head is (computed here for every token, an upper bound; engines
# only need it for the last). Attention per layer and per (query, key) pair costs 2·d for QK^T and 2·d for
# PV, with d = heads × head_dim = 8192: 4·d per pair. A causal mask leaves n(n+1)/2 pairs.

# %%
attn_params = 2 * d_model * q_heads * head_dim + 2 * d_model * kv_heads * head_dim
mlp_params = 3 * d_model * ffn
matmul_params = layers * (attn_params + mlp_params) + vocab * d_model
total_params = claim("total_params", matmul_params + vocab * d_model + layers * 2 * d_model + d_model, unit="params")
check(70e9 < total_params < 71e9, "the config adds up to about 70.6B parameters")


flops_per_weight = given("flops_per_weight_per_token", 2, unit="FLOP", source="one multiply-add per weight per token")
pair_factor = given("attn_flops_per_pair_per_dim", 4, unit="FLOP", source="2 FLOPs for QK^T + 2 for PV per head dim")
causal = claim("causal_fraction", (n_bin + 1) / (2 * n_bin), unit="fraction")  # pairs a causal kernel keeps
masked = claim("masked_fraction", 1 - (n_bin + 1) / (2 * n_bin), unit="fraction")  # pairs a causal kernel skips


def prefill_flops(n: float) -> tuple[float, float]:
    """Linear and causal-attention FLOPs of a prefill of n tokens."""
    linear = flops_per_weight * matmul_params * n
    attention = pair_factor * layers * q_heads * head_dim * n * (n + 1) / 2
    return linear, attention


lin_bin, att_bin = prefill_flops(n_bin)
share_bin = claim("attention_share_2p20", att_bin / (lin_bin + att_bin), unit="fraction")
lin_dec, att_dec = prefill_flops(n_dec)
share_dec = claim("attention_share_1e6", att_dec / (lin_dec + att_dec), unit="fraction")
full_share = claim("attention_share_no_causal", 2 * att_bin / (lin_bin + 2 * att_bin), unit="fraction")
total_flops = claim("prefill_flops_2p20", lin_bin + att_bin, unit="FLOP")
ratio = claim("attention_to_linear", att_bin / lin_bin, unit="x")
check(share_bin > 0.90 and share_dec > 0.90, "over 90% in attention holds under causal masking, either reading")
check(round(share_bin, 2) == 0.91, "about 91%")

# the context length where attention equals the linear layers: L·d·n = P (causal)
crossover = claim("crossover_tokens", matmul_params / (layers * q_heads * head_dim), unit="tokens")

# %% [markdown]
# ## The plan on eight H100s: TP=8, one KV head per GPU
# With 8 KV heads and TP=8, each GPU holds exactly one KV head of every layer: the cache splits evenly.

# %%
w_bytes = total_params * bytes_bf16
w_gpu = claim("weights_per_gpu", w_bytes / gpus, unit="B")
kv_gpu = claim("kv_per_gpu", kv_bin / gpus, unit="B")
kv_heads_gpu = claim("kv_heads_per_gpu", kv_heads / gpus, unit="heads")
check(kv_heads_gpu == 1, "TP=8 leaves exactly one KV head per GPU")
used_gpu = claim("used_per_gpu", w_gpu + kv_gpu, unit="B")
free_gpu = claim("free_per_gpu", hbm * 1e9 - used_gpu, unit="B")
check(used_gpu < hbm * 1e9, "weights + KV fit in 80 GB per GPU")
t_prefill = claim("prefill_seconds_at_peak", total_flops / (gpus * bf16_peak * 1e12), unit="s")
kv_fp8 = claim("kv_bytes_fp8", kv_bin / 2, unit="B")

# %% [markdown]
# ## The change that breaks it: full multi-head attention (64 KV heads instead of 8)

# %%
kv_mha = claim("kv_bytes_mha", kv_bin * q_heads / kv_heads, unit="B")
mha_factor = claim("mha_factor", q_heads / kv_heads, unit="x")
gpus_mha = claim("gpus_for_mha", -(-(kv_mha + w_bytes) // (hbm * 1e9)), unit="GPUs")
nodes_mha = claim("nodes_for_mha", -(-gpus_mha // gpus), unit="nodes")
check(kv_mha == 2560 * 2**30, "2,560 GiB with 64 KV heads")
check(kv_mha > gpus * hbm * 1e9, "MHA cache alone exceeds the box's 640 GB")
print(f"KV {kv_bin/2**30:.0f} GiB / {kv_dec/2**30:.1f} GiB; share {share_bin:.4f} {share_dec:.4f} {full_share:.4f}")
print(f"params {total_params/1e9:.2f}B, per GPU {w_gpu/1e9:.2f} GB + {kv_gpu/1e9:.2f} GB = {used_gpu/1e9:.2f}")
print(f"prefill {total_flops:.3e} FLOP, {t_prefill:.0f} s; crossover {crossover:.0f}; mha {gpus_mha} GPUs {nodes_mha}")
print(f"ratio {ratio:.2f}")
