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
# ## Step time and throughput at a full pool, by context length

# %%
t_full = claim("t_step_full_pool", (weights + pool) / (bw * 1e12 * eff), unit="s")
kv_share = claim("kv_share_full_pool", pool / (weights + pool), unit="fraction")
rows = {}
for ctx_len in (1024, 8192, 32768):
    c = given(f"ctx_{ctx_len}", ctx_len, unit="tokens", source="the question's hypothetical context length")
    seqs = math.floor(pool_tokens / c)
    t_flop = 2 * params * seqs / (peak * 1e12)
    check(weights + overhead + seqs * c * kv_tok <= cuda_total * util, f"{seqs} sequences of {ctx_len} fit")
    rows[ctx_len] = (claim(f"seqs_{ctx_len}", seqs, unit="sequences"),
                     claim(f"tps_{ctx_len}", seqs / t_full, unit="tokens/s"),
                     claim(f"flop_share_{ctx_len}", t_flop / t_full, unit="fraction"))
check(rows[1024][2] < 1, "even the largest batch stays under the FLOP roof (linear layers)")
ratio_1k_32k = claim("tps_1k_over_32k", rows[1024][1] / rows[32768][1], unit="x")

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
seqs_fp8_8k = claim("seqs_fp8_8192", math.floor(fp8_tokens / 8192), unit="sequences")
tps_fp8_8k = claim("tps_fp8_8192", seqs_fp8_8k / t_full, unit="tokens/s")
fp8_gain = claim("fp8_gain_8192", tps_fp8_8k / rows[8192][1], unit="x")
flop_fp8_1k = claim("flop_share_fp8_1024", 2 * params * math.floor(fp8_tokens / 1024) / (peak * 1e12) / t_full,
                    unit="fraction")
eff_lo = given("bw_efficiency_low", 0.6, unit="fraction", source="sensitivity: a lower achieved bandwidth")
t_full_lo = claim("t_step_full_pool_low_eff", (weights + pool) / (bw * 1e12 * eff_lo), unit="s")
