# %% [markdown]
# # Holding Llama-3.1-405B unquantized on a single node: what fits and what each part buys
# Weights from the config (126 layers, hidden 16384, 128 Q / 8 KV heads, FFN 53248, vocab 128256), 2 bytes per
# parameter; BF16 KV 2 · layers · kv_heads · head_dim · 2 bytes per token. TP=8 equals the KV-head count, so
# nothing is replicated. Node HBM from each datasheet; the KV headroom (node HBM − weights) is an upper bound on
# the pool, calibrated once on H200 against vLLM's real budget (utilisation × cudaMemGetInfo total − weights −
# overheads). Decode step: weights plus every request's KV read once at datasheet bandwidth, the same optimism for
# every vendor. GEMMs and attention are separate kernels: attention (intensity q_heads / kv_heads) is memory-bound
# everywhere; the GEMMs' intensity equals the batch, checked against each ridge the script has a datasheet rate for.

# %%
import math

from datasheets import sheet
from dense_llama import llama, runtime_overheads

from qbank.verify import check, claim, fact, given

m = llama("llama3_1_405b")
layers, d, nq, nkv, hd, ffn, vocab = m.layers, m.d, m.nq, m.nkv, m.hd, m.ffn, m.vocab
overheads = runtime_overheads()
n = given("gpus_per_node", 8, unit="GPUs", source="HGX/DGX and AMD OAM platforms: 8 GPUs per node")
check(n <= nkv, "TP=8 does not exceed the 8 KV heads")
ctx = given("context_per_request", 8192, unit="tokens", source="the question's hypothetical: 8K tokens per request")
slo = given("per_user_floor", 30, unit="tokens/s", source="the question's hypothetical: 30 tokens/s per user")
gpus = {
    "h100": (
        fact("h100_sxm.hbm_capacity", "h100_hbm"),
        fact("h100_sxm.hbm_bandwidth", "h100_bw"),
        sheet("h100", "tdp"),
    ),
    "h200": (
        fact("h200_sxm.hbm_capacity", "h200_hbm"),
        fact("h200_sxm.hbm_bandwidth", "h200_bw"),
        sheet("h200", "tdp"),
    ),
    "b200": (
        fact("b200_hgx.hbm_capacity", "b200_hbm"),
        fact("b200_hgx.hbm_bandwidth", "b200_bw"),
        sheet("b200", "tdp"),
    ),
    "mi300x": (sheet("mi300x", "hbm"), sheet("mi300x", "bw"), sheet("mi300x", "tdp")),
    "mi355x": (sheet("mi355x", "hbm"), sheet("mi355x", "bw"), sheet("mi355x", "tdp")),
}

h200_bf16 = fact("h200_sxm.bf16_dense", "h200_bf16")
b200_bf16 = fact("b200_hgx.bf16_dense", "b200_bf16")
mi300x_bf16 = sheet("mi300x", "bf16")

# %% [markdown]
# ## What fits

# %%
params = m.params
weights = claim("weight_bytes", 2 * params, unit="B")
claim("params", params, unit="params")
kv_tok = claim("kv_bytes_per_token", 2 * layers * nkv * hd * 2, unit="B")
kv_req = claim("kv_bytes_per_request", kv_tok * ctx, unit="B")
rows = {}
for g, (cap, bw, tdp) in gpus.items():
    node = claim(f"{g}_node_hbm", n * cap * 1e9, unit="B")
    head = node - weights
    if head > 0:
        claim(f"{g}_headroom", head, unit="B")
    rows[g] = {"node": node, "head": head, "bw": n * bw * 1e12, "power": n * tdp}
check(rows["h100"]["head"] < 0, "the BF16 weights do not fit on an H100 node")
claim("kv_heads_per_gpu", nkv / n, unit="heads")
claim("nodes_that_fit", sum(r["head"] > 0 for r in rows.values()))
claim("headroom_spread", rows["mi355x"]["head"] / rows["h200"]["head"], unit="x")
claim("hbm_spread", rows["mi355x"]["node"] / rows["h200"]["node"], unit="x")
claim("h100_shortfall", -rows["h100"]["head"], unit="B")
claim("weights_fp8", params, unit="B")
claim("h100_headroom_fp8", rows["h100"]["node"] - params, unit="B")

# %% [markdown]
# ## Calibrating the headroom bound on H200 against vLLM's pool

# %%
util = fact("vllm.gpu_memory_utilization_default", "util")
h200_total = fact("h200_sxm.cuda_total_memory", "h200_cuda_total")
pool = claim("h200_vllm_pool", n * (util * h200_total - weights / n - overheads), unit="B")
claim("h200_pool_over_headroom", pool / rows["h200"]["head"], unit="fraction")
claim("h200_vllm_batch", math.floor(pool / kv_req), unit="requests")

ridges = {"h200": h200_bf16 / gpus["h200"][1], "b200": b200_bf16 / gpus["b200"][1]}
ridges["mi300x"] = mi300x_bf16 / gpus["mi300x"][1]
claim("h200_ridge", ridges["h200"])
claim("b200_ridge", ridges["b200"])
claim("mi300x_ridge", ridges["mi300x"])
attn_intensity = claim("attention_intensity", nq / nkv)
check(all(attn_intensity < r for r in ridges.values()), "attention is memory-bound on every part")

# %% [markdown]
# ## Batch, step and throughput per node, memory-capped and at the per-user floor

# %%
for g in ("h200", "b200", "mi300x", "mi355x"):
    r = rows[g]
    mem_batch = math.floor(r["head"] / kv_req)
    slo_batch = math.floor((r["bw"] / slo - weights) / kv_req)
    batch = min(mem_batch, slo_batch)
    step = (weights + batch * kv_req) / r["bw"]
    check(weights + batch * kv_req <= r["node"], f"{g}: weights + KV fit on the node")
    if g in ridges:
        check(batch < 0.75 * ridges[g], f"{g}: the GEMMs (intensity = batch) stay well under the ridge")
    else:
        claim(f"{g}_bf16_needed", batch * r["bw"] / n / 1e12, unit="TFLOP/s")
    if mem_batch > batch:
        claim(f"{g}_mem_batch", mem_batch, unit="requests")
    claim(f"{g}_batch", batch, unit="requests")
    claim(f"{g}_step", step, unit="s")
    claim(f"{g}_user_tps", 1 / step, unit="tokens/s")
    tps = claim(f"{g}_node_tps", batch / step, unit="tokens/s")
    claim(f"{g}_node_power", r["power"], unit="W")
    claim(f"{g}_tokens_per_kj", tps / r["power"] * 1e3, unit="tokens")
    r["tps"] = tps
claim("b200_over_h200", rows["b200"]["tps"] / rows["h200"]["tps"], unit="x")
claim("mi300x_over_h200", rows["mi300x"]["tps"] / rows["h200"]["tps"], unit="x")
claim("mi355x_over_b200", rows["mi355x"]["tps"] / rows["b200"]["tps"], unit="x")
measured = given(
    "published_h200_lead_single_stream",
    1.12,
    unit="x",
    source="github:alpharomercoma/MI300X-vs-H200 REPORT.md @6077fdc7, §1 Summary: 'Dense 70B FP8, single stream | "
    "H200 | 1.12x' (vLLM v0.26.0 on both, one GPU each)",
)
claim("paper_bw_mi300x_over_h200", gpus["mi300x"][1] / gpus["h200"][1], unit="x")
check(measured > 1 and gpus["mi300x"][1] > gpus["h200"][1], "a measured lead against the paper's bandwidth order")
