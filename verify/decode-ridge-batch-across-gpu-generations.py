# %% [markdown]
# # When decode turns compute-bound, generation by generation
# Ridge point = dense BF16 Tensor-Core FLOP/s over HBM bytes/s, per GPU, from each datasheet. A decode step of
# a dense model at batch B does 2P FLOP per token and reads the weights (2P bytes in BF16) once plus every
# sequence's KV, so its arithmetic intensity is 2P·B / (2P + B·kv_seq). Tensor parallelism divides FLOPs,
# weight bytes and KV bytes by the same n, so the per-GPU intensity is the same at any TP degree.

# %%
import math

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
# ## The KV ceiling
# As B grows, intensity rises towards 2P / kv_seq and never past it. With this model and context that ceiling
# sits below every ridge: decode never turns compute-bound, whatever the batch.

# %%
params = m.params
w_bytes = claim("weight_bytes", two * params, unit="B")
kv_tok = claim("kv_bytes_per_token", 2 * layers * nkv * hd * 2, unit="B")
kv_seq = claim("kv_bytes_per_sequence", kv_tok * ctx, unit="B")
ceiling = claim("intensity_ceiling", w_bytes / kv_seq)
check(all(ceiling < r for r in ridge.values()), "at 4K context the KV ceiling is below every GPU's ridge")


def intensity(batch: float, kv_per_seq: float) -> float:
    """FLOP per HBM byte of one decode step at this batch (weights read once, each sequence's KV once)."""
    return two * params * batch / (w_bytes + batch * kv_per_seq)


# The context below which a GPU's ridge is reachable at all: 2P / kv_seq = ridge.
for name in gpus:
    claim(f"{name}_max_ctx_compute_bound", w_bytes / (ridge[name] * kv_tok), unit="tokens")

# %% [markdown]
# ## Short context: the batch that reaches the ridge, and whether it fits
# At 1K tokens of context the ceiling (420) is above every ridge. Solve intensity(B) = ridge for B and check
# the batch fits on the 8-GPU node next to the weights.

# %%
short = given("short_context_tokens", 1024, unit="tokens", source="the question's hypothetical: short chat turns")
kv_short = kv_tok * short
claim("intensity_ceiling_1k", w_bytes / kv_short)
over: dict[str, float] = {}
for name in gpus:
    r = ridge[name]
    check(w_bytes / kv_short > r, f"{name}: at 1K context the ridge is reachable")
    b = r * w_bytes / (two * params - r * kv_short)
    batch = claim(f"{name}_batch_at_ridge_1k", math.ceil(b), unit="sequences")
    check(abs(intensity(batch, kv_short) - r) / r < 0.01, f"{name}: the batch found reaches the ridge")
    cap = gpus[name][2]
    need = w_bytes + batch * kv_short
    claim(f"{name}_bytes_at_ridge_1k", need, unit="B")
    check(need <= tp * cap * 1e9, f"{name}: weights + KV at that batch fit on the 8-GPU node")
    over[name] = batch / r
claim("batch_over_ridge_min", min(over.values()), unit="x")
claim("batch_over_ridge_max", max(over.values()), unit="x")
claim("h100_node_hbm", tp * gpus["h100"][2] * 1e9, unit="B")

# %% [markdown]
# ## What the batch buys below the ridge
# Derated by an assumed achieved-bandwidth fraction (sensitivity shown): a step costs bytes / (eff · BW).
# Throughput per GPU at batch B, 4K context, H100 against H200 (same FLOPs, 1.43× the bandwidth).

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
    tf, bw, cap = gpus[name]
    step = (w_bytes + batch_eval * kv_seq) / (tp * eff * bw * 1e12)
    compute = two * params * batch_eval / (tp * tf * 1e12)
    check(compute < step, f"{name}: memory time exceeds compute time at batch 64")
    check(w_bytes + batch_eval * kv_seq <= tp * cap * 1e9, f"{name}: batch 64 at 4K fits")
    claim(f"{name}_step_b64", step, unit="s")
    claim(f"{name}_compute_share_b64", compute / step, unit="fraction")
claim("bw_ratio_h200_h100", gpus["h200"][1] / gpus["h100"][1], unit="x")
claim("intensity_b64", intensity(batch_eval, kv_seq))
