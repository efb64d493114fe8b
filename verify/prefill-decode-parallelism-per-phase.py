# %% [markdown]
# # One node, two phases: TP8 or two TP4 instances?
# Llama-3.1-70B (bf16) on one 8-GPU H100 node. Prefill: one TP8 instance (one server) against two TP4
# instances fed from one FIFO queue (two servers); service = compute at a derated bf16 rate plus two
# ring all-reduces per layer over NVLink, not overlapped (an upper bound on their cost). P90 TTFT by
# simulation with Poisson arrivals. Decode: the largest batch per instance within the TPOT target and
# the KV pool. The workload is the question's hypothetical.

# %%
import heapq
import random

from qbank.verify import check, claim, fact, given

params = given("params_70b", 70.55e9, unit="params", source="Llama-3.1-70B count from its config (recompute-vs-fetch script)")
layers = fact("llama3_1_70b.num_hidden_layers", "layers")
hidden = fact("llama3_1_70b.hidden_size", "hidden_size")
kv_tok = fact("derived.kv_bytes_per_token_llama31_70b_bf16", "kv_bytes_per_token")
bf16 = given("bf16_bytes", 2, unit="B", source="bf16 stores 2 bytes per value")
gpus = given("node_gpus", 8, unit="GPUs", source="one 8-GPU HGX H100 node")
bw = fact("h100_sxm.hbm_bandwidth", "h100_bw") * 1e12
flops = fact("h100_sxm.bf16_dense", "h100_bf16") * 1e12
nvl = fact("h100_sxm.nvlink_bw_per_gpu", "nvlink_bidir", unit="GB/s")
eta_m = given("mem_efficiency", 0.8, unit="fraction", source="the question's hypothetical: achieved share of HBM bandwidth")
eta_f = given("flop_efficiency", 0.6, unit="fraction", source="the question's hypothetical: achieved share of bf16 FLOP/s")
eta_l = given("link_efficiency", 0.8, unit="fraction", source="the question's hypothetical: achieved share of NVLink bandwidth in all-reduce")
total_mem = fact("h100_sxm.cuda_total_memory", "cuda_total_memory")
util = fact("vllm.gpu_memory_utilization_default", "gpu_memory_utilization")
reserve = given("runtime_reserve", 3e9, unit="B", source="the question's hypothetical: runtime memory per GPU")
prompt = given("prompt_tokens", 4096, unit="tokens", source="the question's hypothetical prompt length")
out = given("output_tokens", 512, unit="tokens", source="the question's hypothetical reply length")
tpot = given("tpot_target_ms", 25, unit="ms", source="the question's hypothetical TPOT target")
link = nvl * 1e9 / 2 * eta_l  # per direction
given("tp_small", 4, unit="GPUs", source="the smaller layout: TP4, two instances per node")
given("instances_tp8_layout", 1, unit="instances", source="one TP8 instance per node")
given("instances_tp4_layout", 2, unit="instances", source="two TP4 instances per node")


def allreduce_s(tp: int, tokens: float) -> float:
    """Ring all-reduce of tokens x hidden bf16 activations across tp GPUs."""
    return 2 * (tp - 1) / tp * tokens * hidden * bf16 / link


def prefill_s(tp: int) -> tuple[float, float]:
    comp = (2 * params * prompt + 4 * layers * hidden * prompt * (prompt + 1) / 2) / (tp * flops * eta_f)
    comm = 2 * layers * allreduce_s(tp, prompt)
    return comp, comm


def p90(lam: float, service: float, servers: int) -> float:
    rng, t, waits = random.Random(5), 0.0, []
    free = [0.0] * servers
    for _ in range(20000):
        t += rng.expovariate(lam)
        start = max(t, heapq.heappop(free))
        heapq.heappush(free, start + service)
        waits.append(start + service - t)
    waits.sort()
    return waits[18000]


def max_rate(service: float, servers: int, target: float) -> float:
    lo, hi = 0.0, servers / service
    for _ in range(20):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if p90(mid, service, servers) <= target else (lo, mid)
    return lo


c8, a8 = prefill_s(8)
c4, a4 = prefill_s(4)
d8 = claim("prefill_s_tp8", c8 + a8, unit="s")
d4 = claim("prefill_s_tp4", c4 + a4, unit="s")
claim("allreduce_share_tp8", a8 / (c8 + a8), unit="fraction")
claim("allreduce_share_tp4", a4 / (c4 + a4), unit="fraction")
claim("allreduce_ms_tp8", a8 * 1e3, unit="ms")
claim("allreduce_ms_tp4", a4 * 1e3, unit="ms")
claim("node_capacity_tp8", 1 / d8, unit="requests")
claim("node_capacity_tp4x2", 2 / d4, unit="requests")
res = {}
for target in (0.25, 1.0, 3.0):
    key = str(target).replace(".", "_")
    r8 = max_rate(d8, 1, target)
    r4 = max_rate(d4, 2, target)
    res[target] = (r8, r4)
    claim(f"ttft_target_{key}", target, unit="s")
    claim(f"rate_tp8_{key}", r8, unit="requests")
    claim(f"rate_tp4x2_{key}", r4, unit="requests")
    if r4 > 0:
        claim(f"tp4x2_over_tp8_{key}", r4 / r8, unit="x")
    print(target, f"TP8 {r8:.2f}/s, 2xTP4 {r4:.2f}/s")
check(res[0.25][1] == 0 < res[0.25][0], "below the TP4 service time only TP8 can meet the target at all")
check(res[1.0][1] > res[1.0][0], "with all-reduces exposed, two TP4 instances serve more at 1 s")
check(res[3.0][1] > res[3.0][0], "at a loose TTFT target two TP4 instances serve more")

# %% [markdown]
# ## Sensitivity: all-reduces fully overlapped with compute
# Same node capacity for both layouts; the single faster server then queues better.

# %%
r8o = claim("rate_tp8_1_0_overlapped", max_rate(c8, 1, 1.0), unit="requests")
r4o = claim("rate_tp4x2_1_0_overlapped", max_rate(c4, 2, 1.0), unit="requests")
claim("tp8_over_tp4x2_overlapped", r8o / r4o, unit="x")
claim("prefill_s_tp8_overlapped", c8, unit="s")
claim("prefill_s_tp4_overlapped", c4, unit="s")
check(r8o > r4o, "with all-reduces hidden, the single TP8 instance serves more at 1 s")

# %% [markdown]
# ## Decode: the same node as one TP8 or two TP4 instances

# %%
mean_ctx = prompt + out / 2


def decode_node_rate(tp: int) -> tuple[float, int]:
    w = params * bf16 / tp
    pool = total_mem * util - w - reserve
    per_seq = mean_ctx * kv_tok / tp
    b = 0
    for k in range(1, 4096):
        # kernel by kernel: the GEMMs (weight read or FLOPs), then attention's KV read; their times add
        gemm = max(w / (bw * eta_m), 2 * params / tp * k / (flops * eta_f))
        if (gemm + k * per_seq / (bw * eta_m)) * 1e3 <= tpot and k * per_seq <= pool:
            b = k
    return (gpus / tp) * b / (tpot / 1e3 * out), b


r_dec8, b8 = decode_node_rate(8)
r_dec4, b4 = decode_node_rate(4)
claim("decode_batch_tp8", b8, unit="sequences")
claim("decode_batch_tp4", b4, unit="sequences")
claim("decode_node_rate_tp8", r_dec8, unit="requests")
claim("decode_node_rate_tp4x2", r_dec4, unit="requests")
claim("decode_tp8_over_tp4x2", r_dec8 / r_dec4, unit="x")
claim("weights_per_gpu_tp4", params * bf16 / 4, unit="B")
claim("weights_per_gpu_tp8", params * bf16 / 8, unit="B")
claim("weights_ratio", 8 / 4, unit="x")
check(r_dec8 > r_dec4, "decode prefers TP8 on this node")
