# %% [markdown]
# # When decode turns compute-bound, generation by generation
# Ridge point = dense BF16 Tensor-Core FLOP/s over HBM bytes/s, per GPU, from each datasheet. A decode step of
# a dense model runs its GEMMs (weights read once, 2P FLOP per sequence) and its attention (each sequence's KV
# read once) as separate kernels in series; each is priced max(bytes / BW, FLOPs / peak) and the two are summed.
# Tensor parallelism divides FLOPs, weight bytes and KV bytes by the same n, so per-GPU intensities do not move.

# %%
from datasheets import sheet
from dense_llama import llama

from qbank.verify import check, claim, fact, given

m = llama("llama3_1_70b")
layers, d, nq, nkv, hd, ffn, vocab = m.layers, m.d, m.nq, m.nkv, m.hd, m.ffn, m.vocab

gpus = {
    "a100": (sheet("a100", "bf16"), sheet("a100", "bw"), sheet("a100", "hbm")),
    "h100": (
        fact("h100_sxm.bf16_dense", "h100_bf16"),
        fact("h100_sxm.hbm_bandwidth", "h100_bw"),
        fact("h100_sxm.hbm_capacity", "h100_hbm"),
    ),
    "h200": (
        fact("h200_sxm.bf16_dense", "h200_bf16"),
        fact("h200_sxm.hbm_bandwidth", "h200_bw"),
        fact("h200_sxm.hbm_capacity", "h200_hbm"),
    ),
    "b200": (
        fact("b200_hgx.bf16_dense", "b200_bf16"),
        fact("b200_hgx.hbm_bandwidth", "b200_bw"),
        fact("b200_hgx.hbm_capacity", "b200_hbm"),
    ),
    "mi300x": (sheet("mi300x", "bf16"), sheet("mi300x", "bw"), sheet("mi300x", "hbm")),
}
two = given(
    "flops_per_param",
    2,
    source="a multiply-add (2 FLOP) per parameter per token, and 2 bytes per BF16 "
    "parameter: the two 2s cancel in the intensity",
)
ctx = given(
    "context_tokens", 4096, unit="tokens", source="the question's hypothetical: 4K tokens of context per sequence"
)
tp = given("tp_gpus", 8, unit="GPUs", source="the question's hypothetical: one 8-GPU node per replica (TP=8)")

# %% [markdown]
# ## Ridge points
# With BF16 weights and no KV the intensity is exactly B FLOP per byte, so the batch at which decode turns
# compute-bound equals the ridge point.

# %%
ridge = {}
for name, (tf, bw, _cap) in gpus.items():
    ridge[name] = claim(f"{name}_ridge", tf / bw)
check(ridge["h200"] < ridge["h100"], "same FLOPs, more bandwidth: the H200's ridge is lower than the H100's")
claim("h200_vs_h100_ridge", ridge["h200"] / ridge["h100"], unit="fraction")

# %% [markdown]
# ## Kernel by kernel
# A decode step runs the GEMMs (QKV, O, gate/up, down, LM head) and the attention kernel in series. The GEMMs
# read the weights once and do 2P FLOP per sequence: intensity B, whatever the context. Attention reads each
# sequence's KV and does 4 · q_heads · head_dim FLOP per layer per cached position against 2 · kv_heads ·
# head_dim · 2 bytes: intensity q_heads / kv_heads FLOP per byte, whatever the batch. Price each kernel as
# max(bytes / BW, FLOPs / peak) and sum: the GEMMs turn compute-bound at B = ridge, attention never does.

# %%
params = m.params
w_bytes = claim("weight_bytes", two * params, unit="B")
kv_tok = claim("kv_bytes_per_token", m.kv_bytes_per_token(2), unit="B")
kv_seq = claim("kv_bytes_per_sequence", kv_tok * ctx, unit="B")
attn_flops_tok = 4 * layers * nq * hd  # FLOP per sequence per cached position (QK^T and PV)
attn_intensity = claim("attention_intensity", attn_flops_tok / kv_tok)
check(all(attn_intensity < r / 10 for r in ridge.values()), "attention sits a decade below every ridge")


def step_time(name: str, batch: float, context: float, e: float = 1.0) -> tuple[float, float, float]:
    """(GEMM time, attention time, GEMM compute time) of one TP-8 decode step, each kernel max(memory, compute)."""
    tf, bw, _cap = gpus[name]
    gemm_mem = w_bytes / (tp * e * bw * 1e12)
    gemm_cmp = two * params * batch / (tp * tf * 1e12)
    attn_mem = batch * kv_tok * context / (tp * e * bw * 1e12)
    attn_cmp = batch * attn_flops_tok * context / (tp * tf * 1e12)
    return max(gemm_mem, gemm_cmp), max(attn_mem, attn_cmp), gemm_cmp


# %% [markdown]
# ## At the ridge batch, with 4K of context
# The GEMMs are at their ridge; attention reads B · kv_seq bytes on top. Attention's share of the step, and
# whether that batch fits next to the weights on the node (datasheet HBM, an upper bound on the pool).

# %%
attn_over_gemm: dict[str, float] = {}
for name in gpus:
    r = ridge[name]
    gemm, attn, _ = step_time(name, r, ctx)
    claim(f"{name}_attention_share_at_ridge", attn / (gemm + attn), unit="fraction")
    claim(f"{name}_step_at_ridge", gemm + attn, unit="s")
    attn_over_gemm[name] = attn / gemm
    need = w_bytes + r * kv_seq
    claim(f"{name}_bytes_at_ridge", need, unit="B")
    check(need <= tp * gpus[name][2] * 1e9, f"{name}: the ridge batch at 4K fits on the node")
    # The context at which, at the ridge batch, attention takes as long as the GEMMs.
    claim(f"{name}_even_ctx", w_bytes / (r * kv_tok), unit="tokens")
claim("attn_over_gemm_min", min(attn_over_gemm.values()), unit="x")
claim("attn_over_gemm_max", max(attn_over_gemm.values()), unit="x")
check(all(v > 1 for v in attn_over_gemm.values()), "at 4K, attention outlasts the GEMMs at every ridge batch")
claim("h100_node_hbm", tp * gpus["h100"][2] * 1e9, unit="B")
# What the aggregate-intensity shortcut would have said: 2P·B / (2P + B·kv_seq) tends to 2P / kv_seq.
ceiling = claim("intensity_ceiling", w_bytes / kv_seq)
check(all(ceiling < r for r in ridge.values()), "the aggregate ceiling is below every ridge, yet the GEMMs reach theirs")

# %% [markdown]
# ## What the batch buys below the ridge
# Derated by an assumed achieved-bandwidth fraction: H100 against H200 (same FLOPs, 1.43× the bandwidth) at a
# 64-sequence batch and 4K context, kernel by kernel.

# %%
eff = given(
    "hbm_efficiency",
    0.8,
    unit="fraction",
    source="assumption: achieved fraction of datasheet HBM "
    "bandwidth in a decode step; the ratios below do not depend on it",
)
batch_eval = given("batch_eval", 64, unit="sequences", source="the question's hypothetical: a 64-sequence batch")
for name in ("h100", "h200"):
    gemm, attn, gemm_cmp = step_time(name, batch_eval, ctx, eff)
    check(gemm_cmp < gemm, f"{name}: the GEMMs are memory-bound at batch 64")
    check(w_bytes + batch_eval * kv_seq <= tp * gpus[name][2] * 1e9, f"{name}: batch 64 at 4K fits")
    claim(f"{name}_step_b64", gemm + attn, unit="s")
    claim(f"{name}_compute_share_b64", gemm_cmp / (gemm + attn), unit="fraction")
claim("bw_ratio_h200_h100", gpus["h200"][1] / gpus["h100"][1], unit="x")
