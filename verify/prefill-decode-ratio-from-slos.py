# %% [markdown]
# # Prefill:decode instance ratio from the TTFT and TPOT targets
# Llama-3.1-70B (bf16), every instance one 8-GPU H100 node at TP8. A prefill instance serves prompts
# one at a time (FIFO, deterministic service D); arrivals are Poisson. Its TTFT is queueing + D, and
# the P90 target fixes how busy it may run: found by simulation. A decode instance runs the largest
# batch whose step meets the TPOT target and whose KV fits the pool. Goodput in DistServe's sense
# (Zhong et al., OSDI 2024): the request rate served with both targets met, per GPU.

# %%
import math
import random

from qbank.verify import check, claim, fact, given

params = given("params_70b", 70.55e9, unit="params",
               source="Llama-3.1-70B count from its config (recompute-vs-fetch script)")
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
reserve = given("runtime_reserve", 3e9, unit="B",
                source="the question's hypothetical: activation peak, non-torch memory and graph pool per GPU")
ttft_slo = given("ttft_p90_target_s", 1.0, unit="s", source="the question's hypothetical TTFT target (P90)")
tpot_slo = given("tpot_target_ms", 25, unit="ms", source="the question's hypothetical TPOT target")
rate = given("arrival_rate", 20, unit="requests", source="the question's hypothetical load, requests per second")

w_gpu = claim("weights_per_gpu", params * bf16 / tp, unit="B")
pool_gpu = claim("kv_pool_per_gpu", total_mem * util - w_gpu - reserve, unit="B")


def prefill_s(n: float) -> float:
    """Prefill time of an n-token prompt at TP8: linear layers plus causal attention, compute-bound."""
    linear = 2 * params * n
    attn = 4 * layers * hidden * n * (n + 1) / 2
    return (linear + attn) / (tp * flops * eta_f)


def p90_ttft(lam: float, d: float, n: int = 20000, seed: int = 11) -> float:
    """P90 of queueing + service in a FIFO single server with Poisson(lam) arrivals and service d."""
    rng = random.Random(seed)
    t, free_at, out = 0.0, 0.0, []
    for _ in range(n):
        t += rng.expovariate(lam)
        start = max(t, free_at)
        free_at = start + d
        out.append(free_at - t)
    out.sort()
    return out[int(0.9 * n)]


def max_rate(d: float) -> float:
    """Largest Poisson rate whose P90 TTFT meets the target (bisection on the utilisation)."""
    lo, hi = 0.0, 1.0
    for _ in range(20):
        mid = (lo + hi) / 2
        if p90_ttft(mid / d, d) <= ttft_slo:
            lo = mid
        else:
            hi = mid
    return lo / d


def decode_batch(prompt: float, out: float) -> tuple[int, float, str]:
    """Largest batch meeting the TPOT target and the pool, with its step time and which limit binds."""
    mean_ctx = prompt + out / 2
    per_seq = mean_ctx * kv_tok / tp
    b_pool = int(pool_gpu // per_seq)
    b_tpot = 0
    for b in range(1, 4096):
        if decode_step_s(b, per_seq) * 1e3 <= tpot_slo:
            b_tpot = b
    b = min(b_pool, b_tpot)
    return b, decode_step_s(b, per_seq), "pool" if b_pool <= b_tpot else "TPOT"


def decode_step_s(b: int, per_seq: float) -> float:
    """Seconds per decode step per GPU. GEMM time = max(weight bytes / BW, FLOPs / F); attention time =
    the batch's KV bytes / BW (one query token per sequence keeps it memory-bound). Different kernels
    on one stream: add them."""
    gemm = max(w_gpu / (bw * eta_m), 2 * params / tp * b / (flops * eta_f))
    return gemm + b * per_seq / (bw * eta_m)


# %% [markdown]
# ## Three workloads (prompt, output tokens) at 20 requests/s

# %%
workloads = {"rag": (8192, 256), "mixed": (4096, 512), "chat": (1024, 1024)}
given("rag_prompt", 8192, unit="tokens", source="the question's hypothetical retrieval workload")
given("rag_output", 256, unit="tokens", source="the question's hypothetical retrieval workload")
given("mixed_prompt", 4096, unit="tokens", source="the question's hypothetical mixed workload")
given("mixed_output", 512, unit="tokens", source="the question's hypothetical mixed workload")
given("chat_prompt", 1024, unit="tokens", source="the question's hypothetical chat workload")
given("chat_output", 1024, unit="tokens", source="the question's hypothetical chat workload")
ratios = {}
res: dict[str, dict[str, float]] = {}
for name, (n_in, n_out) in workloads.items():
    d = prefill_s(n_in)
    lam_p = max_rate(d)
    b, step, limit = decode_batch(n_in, n_out)
    req_per_decode_instance = b / (step * n_out)  # requests/s one decode instance completes
    p_need = rate / lam_p
    d_need = rate / req_per_decode_instance
    p_int, d_int = -(-p_need // 1), -(-d_need // 1)
    claim(f"{name}_prefill_util", lam_p * d, unit="fraction")
    claim(f"{name}_prefill_rate", lam_p, unit="requests")
    claim(f"{name}_decode_batch", b, unit="sequences")
    claim(f"{name}_decode_rate", req_per_decode_instance, unit="requests")
    claim(f"{name}_prefill_instances", p_int, unit="instances")
    claim(f"{name}_decode_instances", d_int, unit="instances")
    claim(f"{name}_ratio", p_need / d_need, unit="x")

    claim(f"{name}_goodput_per_gpu", rate / ((p_int + d_int) * tp), unit="requests")
    ratios[name] = (p_need / d_need, limit, p_int, d_int)
    res[name] = {"d": d, "step": step, "p_need": p_need, "d_need": d_need, "p_int": p_int, "d_int": d_int}
    print(name, f"D={d:.3f}s util={lam_p * d:.2f} lam_p={lam_p:.2f}/s b={b} ({limit}) step={step * 1e3:.1f}ms "
          f"dec={req_per_decode_instance:.2f}/s P={p_need:.2f} D={d_need:.2f} -> {p_int:.0f}:{d_int:.0f}")
check(ratios["rag"][0] > 1 > ratios["chat"][0], "the ratio swings from prefill-heavy to decode-heavy with the workload")
check(ratios["mixed"][1] == "TPOT", "the mixed workload's decode batch is limited by the TPOT target before the pool")
claim("mixed_prefill_s", res["mixed"]["d"], unit="s")
claim("rag_prefill_s", res["rag"]["d"], unit="s")
claim("mixed_decode_step_ms", res["mixed"]["step"] * 1e3, unit="ms")
claim("mixed_mean_context", workloads["mixed"][0] + workloads["mixed"][1] / 2, unit="tokens")
claim("rag_d_over_target", res["rag"]["d"] / ttft_slo, unit="fraction")
chat = res["chat"]
claim("chat_prefill_need", chat["p_need"], unit="instances")
claim("chat_decode_need", chat["d_need"], unit="instances")
claim("chat_gpus", (chat["p_int"] + chat["d_int"]) * tp, unit="GPUs")
claim("chat_need_total", chat["p_need"] + chat["d_need"], unit="instances")
claim("chat_pooled_nodes", math.ceil(chat["p_need"] + chat["d_need"]), unit="nodes")
claim("chat_split_nodes", chat["p_int"] + chat["d_int"], unit="nodes")
claim("chat_idle_fraction", 1 - (chat["p_need"] + chat["d_need"]) / (chat["p_int"] + chat["d_int"]), unit="fraction")
claim("ratio_swing", ratios["rag"][0] / ratios["chat"][0], unit="x")

# %% [markdown]
# ## Sensitivity: the TTFT target sets the prefill utilisation

# %%
d_mixed = prefill_s(4096)
for slo in (0.5, 2.0):
    keep = ttft_slo
    ttft_slo = slo
    claim(f"mixed_prefill_util_slo_{str(slo).replace('.', '_')}", max_rate(d_mixed) * d_mixed, unit="fraction")
    ttft_slo = keep
given("ttft_alt_tight_s", 0.5, unit="s", source="sensitivity: a tighter TTFT target")
given("ttft_alt_loose_s", 2.0, unit="s", source="sensitivity: a looser TTFT target")
