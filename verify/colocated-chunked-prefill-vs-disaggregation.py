# %% [markdown]
# # Colocation with chunked prefill against disaggregation, at the same TPOT target
# Llama-3.1-70B (bf16), instances of one 8-GPU H100 node at TP8; traffic of 4,096-token prompts and
# 512-token replies (the question's hypothetical). Colocated: every step carries the decode batch plus a
# prefill chunk, and the step must stay within the TPOT target; at steady state with arrival rate L per
# node the batch is L * out * t and the chunk is L * prompt * t (Little's law). Disaggregated: a prefill
# node at the utilisation its TTFT target allows (simulated P90, as in prefill-decode-ratio-from-slos)
# and decode nodes at the largest batch whose step meets the target. Roofline derated, optimistic.

# %%
import random

from qbank.verify import check, claim, fact, given

params = given("params_70b", 70.55e9, unit="params", source="Llama-3.1-70B count from its config (recompute-vs-fetch script)")
layers = fact("llama3_1_70b.num_hidden_layers", "layers")
hidden = fact("llama3_1_70b.hidden_size", "hidden_size")
kv_tok = fact("derived.kv_bytes_per_token_llama31_70b_bf16", "kv_bytes_per_token")
bf16 = given("bf16_bytes", 2, unit="B", source="bf16 stores 2 bytes per value")
tp = given("tp_gpus", 8, unit="GPUs", source="example: one instance = one 8-GPU HGX H100 node at TP8")
bw = fact("h100_sxm.hbm_bandwidth", "h100_bw") * 1e12
flops = fact("h100_sxm.bf16_dense", "h100_bf16") * 1e12
eta_m = given("mem_efficiency", 0.8, unit="fraction", source="the question's hypothetical: achieved share of HBM bandwidth")
eta_f = given("flop_efficiency", 0.6, unit="fraction", source="the question's hypothetical: achieved share of bf16 FLOP/s")
total_mem = fact("h100_sxm.cuda_total_memory", "cuda_total_memory")
util = fact("vllm.gpu_memory_utilization_default", "gpu_memory_utilization")
reserve = given("runtime_reserve", 3e9, unit="B", source="the question's hypothetical: runtime memory per GPU")
prompt = given("prompt_tokens", 4096, unit="tokens", source="the question's hypothetical prompt length")
out = given("output_tokens", 512, unit="tokens", source="the question's hypothetical reply length")
ttft = given("ttft_p90_target_s", 1.0, unit="s", source="the question's hypothetical TTFT target (P90)")

w_gpu = params * bf16 / tp
pool = total_mem * util - w_gpu - reserve
seq_bytes = (prompt + out / 2) * kv_tok / tp  # mean live footprint per sequence, per GPU
t_tok = 2 * params / tp / (flops * eta_f)  # compute seconds per token in a step, per GPU


def attn_s(chunk: float) -> float:
    """Attention FLOPs of prefilling one prompt, spread evenly over its chunks, seconds per chunk token."""
    total = 4 * layers * hidden / tp * prompt * (prompt + 1) / 2
    return total / prompt * chunk / (flops * eta_f)


def p90_wait(lam: float, service: float) -> float:
    """P90 of queueing + service, FIFO single server, Poisson(lam) arrivals, deterministic service."""
    rng, t, free_at, waits = random.Random(11), 0.0, 0.0, []
    for _ in range(20000):
        t += rng.expovariate(lam)
        free_at = max(t, free_at) + service
        waits.append(free_at - t)
    waits.sort()
    return waits[18000]


def step(b: float, c: float, additive: bool) -> float:
    """Seconds per step per GPU: decode batch b plus a chunk of c prompt tokens.
    Overlapped: kernel by kernel, each kernel at max(its bytes, its FLOPs): the GEMMs stream the weights
    while they multiply the step's tokens, then attention reads the decode batch's KV and runs the chunk's
    attention FLOPs. Separate kernels do not overlap, so the KV read never hides GEMM compute.
    Additive: no overlap even inside a kernel, every byte and every FLOP in series."""
    w_read = w_gpu / (bw * eta_m)
    kv_read = b * seq_bytes / (bw * eta_m)
    gemm = (b + c) * t_tok
    if additive:
        return w_read + kv_read + gemm + attn_s(c)
    return max(w_read, gemm) + max(kv_read, attn_s(c))


def colocated_rate(tpot_s: float, additive: bool) -> float:
    """Largest arrival rate per node: steps within tpot_s, and prompts, served one at a time in the
    chunk room left beside the decode batch, meet the P90 TTFT target."""
    def ok(lam: float) -> bool:
        b = lam * out * tpot_s
        if b * seq_bytes > pool or step(b, 0, additive) > tpot_s:
            return False
        lo_c, hi_c = 0.0, float(prompt)  # largest chunk that keeps the step within tpot_s
        for _ in range(30):
            mid = (lo_c + hi_c) / 2
            lo_c, hi_c = (mid, hi_c) if step(b, mid, additive) <= tpot_s else (lo_c, mid)
        if lo_c < 1:
            return False
        service = prompt / lo_c * tpot_s
        return lam * service < 1 and p90_wait(lam, service) <= ttft

    lo, hi = 0.0, 40.0
    for _ in range(18):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


d_prefill = prompt * t_tok + attn_s(prompt)


def prefill_rate() -> float:
    """Disaggregated prefill node: largest Poisson rate with P90 TTFT within target."""
    lo, hi = 0.0, 1.0
    for _ in range(20):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if p90_wait(mid / d_prefill, d_prefill) <= ttft else (lo, mid)
    return lo / d_prefill


def decode_rate(tpot_s: float, additive: bool) -> float:
    """Disaggregated decode node: requests/s at the largest batch within tpot_s and the pool."""
    b = 0
    for k in range(1, 4096):
        if step(k, 0, additive) <= tpot_s and k * seq_bytes <= pool:
            b = k
    return b / (tpot_s * out)


lam_p = claim("prefill_node_rate", prefill_rate(), unit="requests")
rows = {}
pairs: dict[tuple[str, int], tuple[float, float, float]] = {}
for additive in (False, True):
    tag = "sum" if additive else "max"
    for tpot_ms in (10, 15, 25, 40):
        s = tpot_ms / 1e3
        colo = colocated_rate(s, additive)
        dec = decode_rate(s, additive)
        disagg_per_node = 1 / (1 / lam_p + 1 / dec)  # ideal fractional P:D split
        rows[(tag, tpot_ms)] = (colo, disagg_per_node)
        claim(f"colo_per_gpu_{tag}_{tpot_ms}", colo / tp, unit="requests")
        claim(f"disagg_per_gpu_{tag}_{tpot_ms}", disagg_per_node / tp, unit="requests")
        claim(f"colo_over_disagg_{tag}_{tpot_ms}", colo / disagg_per_node, unit="x")
        pairs[(tag, tpot_ms)] = (2 * colo, min(lam_p, dec), dec)
        print(tag, tpot_ms, f"colo {colo:.2f}/s/node, disagg {disagg_per_node:.2f}/s/node, decode node {dec:.1f}/s")
for tpot_ms in (10, 15, 25, 40):
    claim(f"tpot_{tpot_ms}", tpot_ms, unit="ms")
given("fleet_nodes", 2, unit="nodes", source="the question's small fleet: two nodes")
for key in (("max", 25), ("sum", 40), ("sum", 25)):
    claim(f"two_node_colo_{key[0]}_{key[1]}", pairs[key][0], unit="requests")
    claim(f"two_node_disagg_{key[0]}_{key[1]}", pairs[key][1], unit="requests")
claim("decode_over_prefill_max_25", pairs[("max", 25)][2] / lam_p, unit="x")
check(rows[("max", 40)][0] > rows[("max", 40)][1], "overlapped roofline, loose target: colocation serves more per GPU")
check(rows[("sum", 10)][0] < rows[("sum", 10)][1], "additive costs, tight target: disaggregation serves more per GPU")

# %% [markdown]
# ## What the colocated step looks like at 25 ms, and the colocated TTFT
# A prompt's TTFT in the colocated node is at least (prompt / chunk) steps.

# %%
lam25 = rows[("max", 25)][0]
chunk25 = claim("colo_chunk_25", lam25 * prompt * 0.025, unit="tokens")
batch25 = claim("colo_batch_25", lam25 * out * 0.025, unit="sequences")
claim("colo_ttft_floor_s_25", prompt / chunk25 * 0.025, unit="s")
claim("weight_read_ms", w_gpu / (bw * eta_m) * 1e3, unit="ms")
claim("max_gap_overlapped_15_up", max(abs(rows[("max", t)][0] / rows[("max", t)][1] - 1) for t in (15, 25, 40)),
      unit="fraction")
claim("colo_gemm_share_25", (batch25 + chunk25) * t_tok / 0.025, unit="fraction")
claim("colo_kv_read_ms_25", batch25 * seq_bytes / (bw * eta_m) * 1e3, unit="ms")
claim("prefill_service_s", d_prefill, unit="s")
