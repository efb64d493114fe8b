# %% [markdown]
# # A decode step with a full KV pool: KV reads against weight reads
# Llama-3.1-8B in BF16 on one H100 80GB under vLLM V1. A decode step reads every weight once and every live
# sequence's KV once; with the pool full, the KV it reads is the pool itself, whatever the mix of lengths.
# Pool = gpu_memory_utilization x cudaMemGetInfo total - weights - runtime overhead (vllm/v1/worker/gpu_worker.py
# determine_available_memory, via the facts file). Memory time = bytes / (datasheet bandwidth x an assumed
# achieved fraction); the FLOP time is checked against it so the memory bound is not quoted past the ridge.

# %%
import math

from model_shapes import dense_decoder_params

from qbank.verify import check, claim, fact, given

layers = fact("llama3_1_8b.num_hidden_layers", "layers")
hidden = fact("llama3_1_8b.hidden_size", "hidden")
heads = fact("llama3_1_8b.num_attention_heads", "heads")
kv_heads = fact("llama3_1_8b.num_key_value_heads", "kv_heads")
hd = fact("llama3_1_8b.head_dim", "head_dim")
ffn = fact("llama3_1_8b.intermediate_size", "ffn")
vocab = fact("llama3_1_8b.vocab_size", "vocab")
kv_tok = fact("derived.kv_bytes_per_token_llama31_8b_bf16", "kv_per_token")
cuda_total = fact("h100_sxm.cuda_total_memory", "cuda_total_bytes")
util = fact("vllm.gpu_memory_utilization_default", "util")
bw = fact("h100_sxm.hbm_bandwidth", "hbm_bw")
peak = fact("h100_sxm.bf16_dense", "bf16_flops")
bf16 = given("bf16_bytes", 2, unit="B", source="BF16 is 2 bytes")
overhead = given("runtime_overhead", 3.0e9, unit="B", source="the question's hypothetical: activation peak + "
                 "non-torch + CUDA-graph pool; vLLM measures them at startup")
eff = given("bw_efficiency", 0.8, unit="fraction", source="the question's hypothetical achieved fraction of "
            "datasheet bandwidth (a decode step's kernels do not all stream at peak); sensitivity below")

params = dense_decoder_params(layers, hidden, heads, kv_heads, hd, ffn, vocab)
weights = claim("weight_bytes", params * bf16, unit="B")
pool = claim("kv_pool", cuda_total * util - weights - overhead, unit="B")
pool_tokens = claim("pool_tokens", math.floor(pool / kv_tok), unit="tokens")
crossover = claim("crossover_tokens", weights / kv_tok, unit="tokens")
c4k = given("ctx_4096", 4096, unit="tokens", source="the question's hypothetical context length")
claim("seqs_cross_4k", round(crossover / c4k), unit="sequences")
claim("seqs_cross_1k", round(crossover / 1024), unit="sequences")
pool_over_w = claim("pool_over_weights", pool / weights, unit="x")

# %% [markdown]
# ## Step time and throughput at a full pool, by context length, priced kernel by kernel
# The linear layers (GEMMs) and the attention kernel run in series, so each is priced on its own roofline and the
# times add: GEMMs max(weight bytes, GEMM FLOPs), attention max(KV bytes, attention FLOPs). A single
# max(weights + KV, all FLOPs) would let the attention kernel's KV read hide the GEMMs' compute.
# GEMM FLOPs: 2 per weight per sequence, minus the input embedding (a lookup, not a GEMM).
# Attention FLOPs per cached token per layer: QK^T and PV, 2 FLOP each per query head and head dim.

# %%
flop_eff = given("flop_efficiency", 0.8, unit="fraction", source="the question's hypothetical achieved fraction of "
                 "dense BF16 peak for the GEMMs and attention (the same derating as the bandwidth)")
gemm_params = claim("gemm_params", params - vocab * hidden, unit="params")
attn_flops_tok = 4 * layers * heads * hd


def gemm_time(seqs: float) -> float:
    return max(weights / (bw * 1e12 * eff), 2 * gemm_params * seqs / (peak * 1e12 * flop_eff))


def attn_time(tokens: float, kv_bytes_per_tok: float) -> float:
    return max(tokens * kv_bytes_per_tok / (bw * 1e12 * eff), attn_flops_tok * tokens / (peak * 1e12 * flop_eff))


t_full = claim("t_step_full_pool", (weights + pool) / (bw * 1e12 * eff), unit="s")
kv_share = claim("kv_share_full_pool", pool / (weights + pool), unit="fraction")
gemm_ridge = claim("gemm_ridge_seqs", weights / (bw * 1e12 * eff) * peak * 1e12 * flop_eff / (2 * gemm_params),
                   unit="sequences")
rows = {}
for ctx_len in (1024, 8192, 32768):
    c = given(f"ctx_{ctx_len}", ctx_len, unit="tokens", source="the question's hypothetical context length")
    seqs = math.floor(pool_tokens / c)
    check(weights + overhead + seqs * c * kv_tok <= cuda_total * util, f"{seqs} sequences of {ctx_len} fit")
    t = gemm_time(seqs) + attn_time(seqs * c, kv_tok)
    rows[ctx_len] = (claim(f"seqs_{ctx_len}", seqs, unit="sequences"),
                     claim(f"t_step_{ctx_len}", t, unit="s"),
                     claim(f"tps_{ctx_len}", seqs / t, unit="tokens/s"),
                     claim(f"gemm_flop_over_weight_time_{ctx_len}",
                           2 * gemm_params * seqs / (peak * 1e12 * flop_eff) / (weights / (bw * 1e12 * eff)),
                           unit="fraction"))
check(rows[1024][3] > 1, "at 1K context the pool's 440 sequences push the GEMMs past their ridge")
check(rows[8192][3] < 1 and rows[32768][3] < 1, "at 8K and 32K the GEMMs stay bandwidth-bound")
attn_intensity = claim("attn_intensity", attn_flops_tok / kv_tok, unit="x")
check(attn_intensity * 10 < peak / bw, "decode attention is far below the ridge at any batch")
gemm_excess_1k = claim("gemm_excess_1024", rows[1024][1] - t_full, unit="s")
ratio_1k_32k = claim("tps_1k_over_32k", rows[1024][2] / rows[32768][2], unit="x")
ctx_ratio = claim("ctx_ratio_32k_1k", 32768 / 1024, unit="x")

# %% [markdown]
# ## Half the pool: KV reads fall, but the weight term does not

# %%
half_tokens = claim("half_pool_tokens", pool_tokens / 2, unit="tokens")
claim("half_fill", half_tokens / pool_tokens)
t_half = claim("t_step_half_pool", (weights + pool / 2) / (bw * 1e12 * eff), unit="s")
speedup_half = claim("half_pool_step_speedup", t_full / t_half, unit="x")

# %% [markdown]
# ## FP8 KV: twice the tokens in the same bytes; a full pool reads the same bytes per step

# %%
fp8_tokens = claim("fp8_pool_tokens", math.floor(pool / (kv_tok / 2)), unit="tokens")
fp8_rows = {}
for ctx_len in (1024, 8192):
    n = math.floor(fp8_tokens / ctx_len)
    t = gemm_time(n) + attn_time(n * ctx_len, kv_tok / 2)
    fp8_rows[ctx_len] = (claim(f"seqs_fp8_{ctx_len}", n, unit="sequences"), t,
                         claim(f"tps_fp8_{ctx_len}", n / t, unit="tokens/s"))
claim("t_step_fp8_1024", fp8_rows[1024][1], unit="s")
fp8_gain = claim("fp8_gain_8192", fp8_rows[8192][2] / rows[8192][2], unit="x")
fp8_gain_1k = claim("fp8_gain_1024", fp8_rows[1024][2] / rows[1024][2], unit="x")
check(fp8_gain_1k < fp8_gain, "the compute-bound GEMMs eat part of FP8's gain at 1K")
eff_lo = given("bw_efficiency_low", 0.6, unit="fraction", source="sensitivity: a lower achieved bandwidth")
t_full_lo = claim("t_step_full_pool_low_eff", (weights + pool) / (bw * 1e12 * eff_lo), unit="s")
cap = given("max_num_seqs_h100", 1024, unit="sequences", source="vllm/engine/arg_utils.py "
            "EngineArgs.get_batch_defaults: device_memory >= 70 GiB and not A100 -> default_max_num_seqs 1024")
check(max(rows[1024][0], fp8_rows[1024][0]) <= cap, "every batch here runs under vLLM's default max_num_seqs")
