# %% [markdown]
# # H200 against H100 for Llama-3.1-70B in BF16: the price ratio at which the upgrade stops paying
# vLLM's KV pool per GPU = gpu_memory_utilization × the total cudaMemGetInfo reports − weights per GPU −
# (activation peak + non-torch memory + CUDA-graph estimate). The three overheads are the same example
# figures as the memory-budget answer (vLLM measures them at start-up; read yours from its log).
# Every live request is counted at its full 8K context (the worst case the pool must hold).
# A decode step reads the weights plus every request's KV once, at an assumed fraction of datasheet bandwidth.

# %%
import math

from datasheets import sheet
from dense_llama import llama, runtime_overheads

from qbank.verify import check, claim, fact, given

m = llama("llama3_1_70b")
layers, d, nq, nkv, hd, ffn, vocab = m.layers, m.d, m.nq, m.nkv, m.hd, m.ffn, m.vocab
overheads = runtime_overheads()
util = fact("vllm.gpu_memory_utilization_default", "util")
h100_total = fact("h100_sxm.cuda_total_memory", "h100_cuda_total")
h200_total = fact("h200_sxm.cuda_total_memory", "h200_cuda_total")
h100_bw = fact("h100_sxm.hbm_bandwidth", "h100_bw")
h200_bw = fact("h200_sxm.hbm_bandwidth", "h200_bw")
h100_bf16 = fact("h100_sxm.bf16_dense", "h100_bf16")
h100_hbm = fact("h100_sxm.hbm_capacity", "h100_hbm")
h200_hbm = fact("h200_sxm.hbm_capacity", "h200_hbm")
h100_tdp = sheet("h100", "tdp")
h200_tdp = sheet("h200", "tdp")
ctx = given(
    "context_per_request", 8192, unit="tokens", source="the question's hypothetical: 8K tokens per live request"
)
slo = given(
    "per_user_tokens_per_s", 30, unit="tokens/s", source="the question's hypothetical: a 30 tokens/s per-user floor"
)
eff = given(
    "hbm_efficiency",
    0.8,
    unit="fraction",
    source="assumption: achieved share of datasheet HBM bandwidth in a decode step; the sensitivity is computed below",
)
tp4 = given("tp4", 4, unit="GPUs", source="the fleet's layout: Llama-3.1-70B BF16 at TP=4")
tp2 = given("tp2", 2, unit="GPUs", source="the alternative: TP=2")

# %%
params = m.params
weights = claim("weight_bytes", 2 * params, unit="B")
kv_req = claim("kv_bytes_per_request", 2 * layers * nkv * hd * 2 * ctx, unit="B")
step_slo = claim("step_budget", 1 / slo, unit="s")


def replica(total: float, bw_tbs: float, n: int, e: float) -> dict[str, float]:
    """Pool, memory-capped batch, SLO-capped batch and tokens/s per GPU for one TP-n replica."""
    pool = n * (util * total - weights / n - overheads)
    mem_batch = math.floor(pool / kv_req)
    slo_batch = math.floor((step_slo * n * e * bw_tbs * 1e12 - weights) / kv_req)
    batch = min(mem_batch, slo_batch)
    step = (weights + batch * kv_req) / (n * e * bw_tbs * 1e12)
    return {
        "pool": pool,
        "mem_batch": mem_batch,
        "slo_batch": slo_batch,
        "batch": batch,
        "step": step,
        "tps_gpu": batch / step / n,
        "user_tps": 1 / step,
    }


h100 = replica(h100_total, h100_bw, int(tp4), eff)
h200 = replica(h200_total, h200_bw, int(tp4), eff)
h200_2 = replica(h200_total, h200_bw, int(tp2), eff)
h100_2 = replica(h100_total, h100_bw, int(tp2), eff)
claim("h100_tp2_mem_batch", h100_2["mem_batch"], unit="requests")
check(h100_2["mem_batch"] < 3, "TP=2 on H100 loads, but its pool holds almost nothing")
for label, r, n in (("h100", h100, tp4), ("h200", h200, tp4), ("h200_tp2", h200_2, tp2)):
    check(weights + r["batch"] * kv_req <= r["pool"] + weights, f"{label}: weights + KV fit in usable HBM")
    check(r["step"] <= step_slo, f"{label}: the per-user floor holds")
    # GEMMs and attention are separate kernels: the GEMMs' math against their own (derated) weight read.
    gemm_cmp = 2 * params * r["batch"] / (n * h100_bf16 * 1e12)
    gemm_read = weights / (n * eff * (h100_bw if label == "h100" else h200_bw) * 1e12)
    check(gemm_cmp < gemm_read, f"{label}: the GEMMs are memory-bound on their own roofline")
    if n == tp4:
        claim(f"{label}_gemm_compute_over_read", gemm_cmp / gemm_read, unit="fraction")
    claim(f"{label}_mem_batch", r["mem_batch"], unit="requests")
    claim(f"{label}_batch", r["batch"], unit="requests")
    claim(f"{label}_tps_per_gpu", r["tps_gpu"], unit="tokens/s")
for label, r in (("h100", h100), ("h200", h200)):
    claim(f"{label}_pool", r["pool"], unit="B")
    claim(f"{label}_step", r["step"], unit="s")
    claim(f"{label}_user_tps", r["user_tps"], unit="tokens/s")
claim("h100_slo_batch", h100["slo_batch"], unit="requests")
claim("h100_compute_share", 2 * params * h100["batch"] / (tp4 * h100_bf16 * 1e12) / h100["step"], unit="fraction")

# %% [markdown]
# ## The break-even price ratio, and its sensitivity to the assumed efficiency
# Cost per token = price per GPU-hour / tokens per GPU-hour, so the H200 is cheaper per token while its price
# ratio stays under its throughput ratio. The H100 is memory-capped, the H200 SLO-capped, so the ratio moves
# with the bandwidth efficiency.

# %%
claim("bw_ratio", h200_bw / h100_bw, unit="x")
claim("capacity_ratio", h200_hbm / h100_hbm, unit="x")
ratio = claim("break_even_price_ratio", h200["tps_gpu"] / h100["tps_gpu"], unit="x")
claim("pool_ratio", h200["pool"] / h100["pool"], unit="x")
claim("tp2_vs_tp4_h200", h200_2["tps_gpu"] / h200["tps_gpu"], unit="fraction")
check(h200_2["tps_gpu"] < h200["tps_gpu"], "on H200, TP=2 gives fewer tokens per GPU than TP=4")
lo_e = given("hbm_efficiency_low", 0.7, unit="fraction", source="sensitivity: a lower achieved bandwidth")
hi_e = given("hbm_efficiency_high", 0.9, unit="fraction", source="sensitivity: a higher achieved bandwidth")
for tag, e in (("low", lo_e), ("high", hi_e)):
    a = replica(h100_total, h100_bw, int(tp4), e)
    b = replica(h200_total, h200_bw, int(tp4), e)
    claim(f"break_even_{tag}_eff", b["tps_gpu"] / a["tps_gpu"], unit="x")
    claim(f"h100_batch_{tag}_eff", a["batch"], unit="requests")
    claim(f"h200_batch_{tag}_eff", b["batch"], unit="requests")
claim("energy_per_token_ratio", (h200_tdp / h200["tps_gpu"]) / (h100_tdp / h100["tps_gpu"]), unit="fraction")
check(1.5 < ratio < 2.5, "the break-even ratio lands between 1.5x and 2.5x")
