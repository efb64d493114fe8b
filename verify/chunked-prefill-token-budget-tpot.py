# %% [markdown]
# # Chunked prefill: what the token budget does to TPOT and to TTFT
# vLLM V1 schedules the running (decode) requests first and fills the rest of the step's token budget
# (max_num_batched_tokens) with prefill chunks. One step's time is priced on a derated roofline per GPU
# of Llama-3.1-70B at TP8 on an H100 node, kernel by kernel: the GEMMs (one weight read; 2 FLOPs per
# parameter per token) and attention (the decode batch's KV and the chunk's prefix KV; the decodes' and
# the chunk's attention FLOPs) run one after the other, so their times add, each at max(bytes, FLOPs).
# Taking each kernel at its derated roof is optimistic; TP all-reduces are left out (they add to both).

# %%
from qbank.verify import check, claim, fact, given

params = given("params_70b", 70.55e9, unit="params",
               source="Llama-3.1-70B count from its config (recompute-vs-fetch script)")
layers = fact("llama3_1_70b.num_hidden_layers", "layers")
hidden = fact("llama3_1_70b.hidden_size", "hidden_size")
kv_tok = fact("derived.kv_bytes_per_token_llama31_70b_bf16", "kv_bytes_per_token")
given("flops_per_param", 2, unit="FLOP", source="a forward pass costs 2 FLOPs (multiply + add) per parameter per token")
bf16 = given("bf16_bytes", 2, unit="B", source="bf16 stores 2 bytes per value")
given("flop_factor", 2, source="2 FLOPs per multiply-add (the concept pages' formulas)")
tp = given("tp_gpus", 8, unit="GPUs", source="example: tensor parallel over one 8-GPU HGX H100 node")
bw = fact("h100_sxm.hbm_bandwidth", "h100_bw") * 1e12
flops = fact("h100_sxm.bf16_dense", "h100_bf16") * 1e12
eta_m = given("mem_efficiency", 0.8, unit="fraction",
              source="the question's hypothetical: achieved fraction of peak HBM bandwidth")
eta_f = given("flop_efficiency", 0.6, unit="fraction",
              source="the question's hypothetical: achieved fraction of peak bf16 FLOP/s in the GEMMs")
decodes = given("decode_batch", 128, unit="sequences", source="the question's hypothetical running batch")
ctx = given("decode_context_tokens", 4096, unit="tokens", source="the question's hypothetical mean context of a running request")
prompt = given("long_prompt_tokens", 32768, unit="tokens", source="the question's hypothetical long prompt that arrives")
default_budget = given("vllm_default_budget_h100_server", 8192, unit="tokens",
                       source="github:vllm-project/vllm vllm/engine/arg_utils.py get_batch_defaults @99d7eb5d: "
                       "max_num_batched_tokens 8192 for OPENAI_API_SERVER on >= 70 GiB non-A100 GPUs")
total_mem = fact("h100_sxm.cuda_total_memory", "cuda_total_memory")
util = fact("vllm.gpu_memory_utilization_default", "gpu_memory_utilization")
reserve = given("runtime_reserve", 3e9, unit="B",
                source="the question's hypothetical: activation peak, non-torch memory and graph pool per GPU")

w_gpu = claim("weights_per_gpu", params * bf16 / tp, unit="B")
kv_dec_gpu = claim("decode_kv_per_gpu", decodes * ctx * kv_tok / tp, unit="B")
pool_gpu = claim("kv_pool_per_gpu", total_mem * util - w_gpu - reserve, unit="B")
check(kv_dec_gpu + prompt * kv_tok / tp <= pool_gpu, "the decode batch and the long prompt's KV fit in the pool")


def gemm_s(chunk: int) -> tuple[float, float]:
    """(weight-read seconds, GEMM FLOP seconds) per GPU: the decode tokens plus the chunk's tokens."""
    return w_gpu / (bw * eta_m), 2 * params / tp * (decodes + chunk) / (flops * eta_f)


def attn_s(chunk: int, prefix: int) -> float:
    """Attention per GPU: reads the decode batch's KV and the chunk's prefix KV; FLOPs of the decodes
    (one query each over its context) and of the chunk (positions prefix..prefix+chunk-1 over all
    earlier ones): QK^T and PV, 2 FLOPs per multiply-add each."""
    mem = (kv_dec_gpu + (prefix + chunk) * kv_tok / tp) / (bw * eta_m)
    fl = 4 * layers * hidden / tp * (decodes * ctx + chunk * prefix + chunk * (chunk + 1) / 2)
    return max(mem, fl / (flops * eta_f))


def step_s(chunk: int, prefix: int) -> float:
    return max(gemm_s(chunk)) + attn_s(chunk, prefix)


t_decode = step_s(0, 0)
claim("decode_only_step_ms", t_decode * 1e3, unit="ms")
w_read, comp0 = gemm_s(0)
claim("weight_read_ms", w_read * 1e3, unit="ms")
claim("decode_only_compute_ms", comp0 * 1e3, unit="ms")
claim("decode_attention_ms", attn_s(0, 0) * 1e3, unit="ms")
# the chunk that fills the GEMMs' compute slack under their weight read
free = claim("free_chunk_tokens", (w_read * flops * eta_f) / (2 * params / tp) - decodes, unit="tokens")
check(free > 0, "the decode step's GEMMs have compute slack")

# %% [markdown]
# ## The sweep: the same 32k-token prompt, four budgets
# Each step schedules the 128 decodes, then budget - 128 prompt tokens.

# %%
rows = {}
for budget in (512, 2048, 8192, 16384):
    chunk = budget - int(decodes)
    t, done, worst, n = 0.0, 0, 0.0, 0
    while done < prompt:
        c = min(chunk, int(prompt) - done)
        s = step_s(c, done)
        t, done, worst, n = t + s, done + c, max(worst, s), n + 1
    rows[budget] = (t, worst, n)
    claim(f"ttft_s_budget_{budget}", t, unit="s")
    claim(f"tpot_worst_ms_budget_{budget}", worst * 1e3, unit="ms")
    claim(f"steps_budget_{budget}", n, unit="steps")
    claim(f"budget_{budget}", budget, unit="tokens")
    print(budget, f"TTFT {t:.2f} s, worst TPOT {worst * 1e3:.1f} ms over {n} steps")
check(rows[512][0] > rows[8192][0], "small chunks lengthen TTFT")
check(rows[8192][1] > 10 * t_decode, "the default budget stalls decodes for over ten decode steps' time")
claim("chunk_budget_512", 512 - decodes, unit="tokens")
claim("ttft_rise_512_vs_8192", rows[512][0] / rows[8192][0] - 1, unit="fraction")
claim("ttft_rise_2048_vs_8192", rows[2048][0] / rows[8192][0] - 1, unit="fraction")
claim("tpot_ratio_8192_vs_decode", rows[8192][1] / t_decode, unit="x")

# %% [markdown]
# ## Pick the budget from the TPOT target
# The largest chunk whose worst step (at the end of the prompt, where the attention term is largest)
# stays within a TPOT target.

# %%
target = given("tpot_target_ms", 50, unit="ms", source="the question's hypothetical TPOT SLO")
best = 0
for c in range(16, 16384, 16):
    if step_s(c, int(prompt) - c) * 1e3 <= target:
        best = c
claim("chunk_for_target", best, unit="tokens")
claim("budget_for_target", best + decodes, unit="tokens")
t, done, n = 0.0, 0, 0
while done < prompt:
    c = min(best, int(prompt) - done)
    t, done, n = t + step_s(c, done), done + c, n + 1
claim("ttft_s_at_target", t, unit="s")
claim("ttft_penalty_vs_8192", t / rows[8192][0] - 1, unit="fraction")
lin = 2 * params / tp * prompt / (flops * eta_f)
attn_total = 4 * layers * hidden / tp * prompt * (prompt + 1) / 2 / (flops * eta_f)
claim("attention_share_of_prefill_flops", attn_total / (lin + attn_total), unit="fraction")
print(best, t, default_budget)
