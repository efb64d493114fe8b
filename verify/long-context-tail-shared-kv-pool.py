# %% [markdown]
# # One 128K-token request in a pool sized for 2K-token traffic
# Llama-3.1-8B in BF16 on one H100 80GB under vLLM V1: pool as in vllm/v1/worker/gpu_worker.py
# determine_available_memory (facts), 128 KiB of KV per token. vLLM's startup check
# (vllm/v1/core/kv_cache_utils.py check_enough_kv_cache_memory) only asks that ONE max_model_len request fit.
# Preemption (vllm/v1/core/sched/scheduler.py schedule()): when a running request cannot get a block, the
# scheduler pops the most recently admitted running request (FCFS; highest priority value under the priority
# policy), frees its KV and sets num_computed_tokens = 0: the victim recomputes from scratch.

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
max_ctx = fact("llama3_1_8b.max_position_embeddings", "max_context")
kv_tok = fact("derived.kv_bytes_per_token_llama31_8b_bf16", "kv_per_token")
cuda_total = fact("h100_sxm.cuda_total_memory", "cuda_total_bytes")
util = fact("vllm.gpu_memory_utilization_default", "util")
peak = fact("h100_sxm.bf16_dense", "bf16_flops")
bf16 = given("bf16_bytes", 2, unit="B", source="BF16 is 2 bytes")
overhead = given("runtime_overhead", 3.0e9, unit="B", source="the question's hypothetical: activation peak + "
                 "non-torch + CUDA-graph pool, measured by vLLM at startup")
typical = given("typical_tokens", 2048, unit="tokens", source="the question's hypothetical mean tokens held per "
                "request (prompt plus output so far)")
mfu = given("prefill_mfu", 0.5, unit="fraction", source="the question's hypothetical prefill efficiency "
            "(fraction of dense BF16 peak); sensitivity in the text")
done = given("preempt_progress", 0.9, unit="fraction", source="the question's hypothetical: how far the long "
             "prefill got before it was preempted")
long_share_arrivals = given("long_arrival_share", 0.01, unit="fraction", source="the question's hypothetical "
                            "share of requests that are 128K long")

params = dense_decoder_params(layers, hidden, heads, kv_heads, hd, ffn, vocab)
pool = claim("kv_pool", cuda_total * util - params * bf16 - overhead, unit="B")
pool_tokens = claim("pool_tokens", math.floor(pool / kv_tok), unit="tokens")

# %% [markdown]
# ## The startup check passes; what one long request takes from everyone else

# %%
long_kv = claim("long_kv_bytes", max_ctx * kv_tok, unit="B")
check(long_kv <= pool, "vLLM's startup check passes: one max_model_len request fits")
long_share = claim("long_pool_share", max_ctx / pool_tokens, unit="fraction")
typical_fit = claim("typical_requests_full_pool", math.floor(pool_tokens / typical), unit="requests")
displaced = claim("typical_displaced_per_long", math.floor(max_ctx / typical), unit="requests")
max_long = claim("max_concurrent_long", math.floor(pool_tokens / max_ctx), unit="requests")
left = claim("tokens_left_with_max_long", pool_tokens - max_long * max_ctx, unit="tokens")
left_typ = claim("typical_left_with_max_long", math.floor(left / typical), unit="requests")

# %% [markdown]
# ## What a long prefill costs, and what a preemption throws away
# Prefill FLOPs: the layers' GEMMs 2 * (params - embedding - LM head) * L; the LM head runs on the last prompt
# token only (vLLM computes logits for the positions it samples; the embedding is a lookup); causal attention
# 2 * L^2 * layers * heads * head_dim (QK^T and PV over half the square, 2 FLOP per multiply-add).

# %%
lin = 2 * (params - 2 * vocab * hidden) * max_ctx + 2 * vocab * hidden
attn = 2 * max_ctx ** 2 * layers * heads * hd
prefill_flop = claim("long_prefill_flop", lin + attn, unit="FLOP")
attn_share = claim("long_prefill_attention_share", attn / (lin + attn), unit="fraction")
t_prefill = claim("long_prefill_seconds", (lin + attn) / (peak * 1e12 * mfu), unit="s")
lost = claim("preempted_seconds_lost", done * t_prefill, unit="s")
mfu_hi = given("prefill_mfu_high", 0.7, unit="fraction", source="sensitivity: a better-tuned prefill")
t_prefill_hi = claim("long_prefill_seconds_high_mfu", (lin + attn) / (peak * 1e12 * mfu_hi), unit="s")

# %% [markdown]
# ## The share of KV-token-time the long tail takes
# Memory held over a request's life scales with tokens held x time held; with a hypothetical 1% of arrivals at
# 128K and the rest at the typical size, and holding time proportional to tokens (a crude but monotone proxy),
# the long requests' share of pool occupancy:

# %%
w_long = long_share_arrivals * max_ctx ** 2
w_typ = (1 - long_share_arrivals) * typical ** 2
occupancy_long = claim("long_occupancy_share", w_long / (w_long + w_typ), unit="fraction")
occ_equal_time = claim("long_occupancy_share_equal_time", long_share_arrivals * max_ctx / (long_share_arrivals
                        * max_ctx + (1 - long_share_arrivals) * typical), unit="fraction")
split_len = given("short_pool_max_len", 32768, unit="tokens", source="the question's hypothetical max_model_len "
                  "for the short-request replicas")
short_share = claim("short_pool_long_share", split_len / pool_tokens, unit="fraction")
