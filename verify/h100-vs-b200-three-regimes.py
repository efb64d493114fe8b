# %% [markdown]
# # H100 against B200 in three serving regimes
# GPU figures from the fact base: H100 SXM; B200 as in NVIDIA's HGX B200 table, 180 GB and 7.7 TB/s (the
# fact base marks DGX marketing's 8 TB/s and the widely quoted 192 GB as alternatives; the HGX figures are
# the ones confirmed in MLCommons system files, so they are used here). Dense Tensor-Core FLOPs (half the
# sparse datasheet figures). Model: Llama-3.1-70B, FP8 weights (1 byte per parameter) and FP8 KV cache
# (1 byte per value), 8,192 tokens of context per request. Runtime reserves (activations, CUDA context)
# are left out; they shrink the H100's headroom further, so the capacity ratio here is a lower bound.

# %%
import math

from qbank.verify import check, claim, fact, given

h_bf16 = fact("h100_sxm.bf16_dense", "h100_bf16")
h_fp8 = fact("h100_sxm.fp8_dense", "h100_fp8")
h_bw = fact("h100_sxm.hbm_bandwidth", "h100_bw")
h_cap = fact("h100_sxm.hbm_capacity", "h100_hbm")
b_bf16 = fact("b200_hgx.bf16_dense", "b200_bf16")
b_fp8 = fact("b200_hgx.fp8_dense", "b200_fp8")
b_bw = fact("b200_hgx.hbm_bandwidth", "b200_bw")
b_cap = fact("b200_hgx.hbm_capacity", "b200_hbm")
b_bw_dgx = given("b200_bw_dgx", 8, unit="TB/s", source="DGX B200 marketing figure (facts: b200_hgx.hbm_bandwidth note)")
b_cap_192 = given("b200_hbm_192", 192, unit="GB", source="widely quoted B200 capacity (facts: "
    "b200_hgx.hbm_capacity note)")
layers = fact("llama3_1_70b.num_hidden_layers", "layers")
d = fact("llama3_1_70b.hidden_size", "d_model")
nq = fact("llama3_1_70b.num_attention_heads", "q_heads")
nkv = fact("llama3_1_70b.num_key_value_heads", "kv_heads")
hd = fact("llama3_1_70b.head_dim", "head_dim")
ffn = fact("llama3_1_70b.intermediate_size", "ffn_dim")
vocab = fact("llama3_1_70b.vocab_size", "vocab")
ctx = given("context_per_request", 8192, unit="tokens", source="example: 8K tokens of context per request")

# %% [markdown]
# ## Datasheet ratios

# %%
r_bf16 = claim("ratio_bf16", b_bf16 / h_bf16, unit="x")
r_fp8 = claim("ratio_fp8", b_fp8 / h_fp8, unit="x")
r_bw = claim("ratio_bw", b_bw / h_bw, unit="x")
r_cap = claim("ratio_capacity", b_cap / h_cap, unit="x")
check(max(r_bf16, r_fp8, r_bw, r_cap) - min(r_bf16, r_fp8, r_bw, r_cap) < 0.06, "all four ratios within 2.25-2.30")

# %% [markdown]
# ## Capacity regime: Llama-3.1-70B in FP8 on one GPU
# Headroom = HBM − weights; batch = floor(headroom / KV per request); a decode step reads the weights plus
# every request's KV once (bandwidth-bound, checked against the FP8 compute time below).

# %%
params = layers * (2 * d * nq * hd + 2 * d * nkv * hd + 3 * d * ffn + 2 * d) + 2 * vocab * d + d
weights = claim("weights_fp8", params * 1, unit="B")
kv_tok = claim("kv_bytes_per_token_fp8", 2 * layers * nkv * hd * 1, unit="B")
kv_req = claim("kv_bytes_per_request", kv_tok * ctx, unit="B")


def serve(cap_gb: float, bw_tbs: float, fp8_tf: float, n: int) -> dict[str, float]:
    """Max batch, step time and decode throughput of n GPUs holding one copy of the model."""
    head = n * cap_gb * 1e9 - weights
    batch = math.floor(head / kv_req)
    step = (weights + batch * kv_req) / (n * bw_tbs * 1e12)
    compute = 2 * params * batch / (n * fp8_tf * 1e12)
    return {"head": head, "batch": batch, "step": step, "compute": compute, "tps": batch / step / n}


h1 = serve(h_cap, h_bw, h_fp8, 1)
b1 = serve(b_cap, b_bw, b_fp8, 1)
tp2 = given("h100_tp", 2, unit="GPUs", source="the usual H100 layout for a 70B FP8 replica: TP=2")
h2 = serve(h_cap, h_bw, h_fp8, int(tp2))
check(b1["compute"] < b1["step"] and h2["compute"] < h2["step"], "decode stays bandwidth-bound at these batches")
claim("h100_headroom", h1["head"], unit="B")
claim("b200_headroom", b1["head"], unit="B")
claim("headroom_ratio", b1["head"] / h1["head"], unit="x")
claim("h100_batch", h1["batch"], unit="requests")
claim("b200_batch", b1["batch"], unit="requests")
claim("h100_tp2_batch", h2["batch"], unit="requests")
claim("h100_step", h1["step"], unit="s")
claim("batch_ratio", b1["batch"] / h1["batch"], unit="x")
claim("b200_step", b1["step"], unit="s")
claim("h100_tps", h1["tps"], unit="tokens/s")
claim("b200_tps", b1["tps"], unit="tokens/s")
claim("h100_tp2_tps_per_gpu", h2["tps"], unit="tokens/s")
cap_gain = claim("capacity_regime_gain", b1["tps"] / h1["tps"], unit="x")
claim("b200_weight_share", weights / (b_cap * 1e9), unit="fraction")
claim("h100_tp2_weight_share", weights / (tp2 * h_cap * 1e9), unit="fraction")
tp2_gain = claim("gain_vs_h100_tp2_per_gpu", b1["tps"] / h2["tps"], unit="x")
check(cap_gain > 4 * r_bw, "capacity regime gain far exceeds the bandwidth ratio")
# with 8 TB/s the bandwidth ratio would be:
claim("ratio_bw_dgx", b_bw_dgx / h_bw, unit="x")
check(b_cap_192 * 1e9 - weights > b1["head"], "the 192 GB figure only adds headroom")
for row in (h1, b1, h2):
    print({k: round(v, 4) for k, v in row.items()})
print(r_bf16, r_fp8, r_bw, r_cap, cap_gain, tp2_gain, b1["head"] / h1["head"])
