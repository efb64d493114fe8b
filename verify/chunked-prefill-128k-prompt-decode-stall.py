# %% [markdown]
# # Chunked prefill of a 128K prompt next to running decodes (Llama-3.1-70B, 8x H100, vLLM defaults)
# vLLM's token budget per step on an H100-class GPU when serving the OpenAI API: vllm/engine/arg_utils.py
# EngineArgs.get_batch_defaults (device memory >= 70 GiB and not A100: OPENAI_API_SERVER -> 8192). Decode tokens
# are scheduled first and the prefill chunk takes the rest of the budget. FLOP counts as in FlashAttention's
# benchmark (4 * q * kv * heads * head_dim, causal within the chunk); times at the dense BF16 peak are lower bounds.

# %%
import math

from qbank.verify import check, claim, fact, given

L = fact("llama3_1_70b.num_hidden_layers", "layers")
d = fact("llama3_1_70b.hidden_size", "hidden")
kvh = fact("llama3_1_70b.num_key_value_heads", "kv_heads")
hd = fact("llama3_1_70b.head_dim", "head_dim")
ffn = fact("llama3_1_70b.intermediate_size", "ffn")
peak = fact("h100_sxm.bf16_dense", "bf16_flops")
bw = fact("h100_sxm.hbm_bandwidth", "hbm_bw")
given("nodes", 1, unit="nodes", source="the question's hypothetical: one HGX H100 node")
tp = given("tp_gpus", 8, unit="GPUs", source="the question's hypothetical: one 8-GPU HGX H100 node, TP=8")
n = given("prompt_tokens", 131072, unit="tokens", source="the question's hypothetical: a 128K-token prompt")
budget = given(
    "token_budget",
    8192,
    unit="tokens",
    source="vLLM vllm/engine/arg_utils.py get_batch_defaults: max_num_batched_tokens 8192 for OPENAI_API_SERVER "
    "on GPUs with >= 70 GiB that are not A100",
)
given("decode_tokens_each", 1, unit="tokens", source="a decode step schedules one new token per running request")
decodes = given("decoding_requests", 64, unit="requests", source="the question's hypothetical: 64 running decodes")
bf16 = given("bf16_bytes", 2, unit="B", source="BF16: 2 bytes per element")
coeff = given("attn_matmul_coeff", 4, source="QK^T and PV, 2 FLOP per multiply-add each")
small_budget = given(
    "small_budget", 2048, unit="tokens", source="vLLM's default budget for the API server on smaller GPUs (same file)"
)

# %% [markdown]
# ## Chunks, and each chunk step priced kernel by kernel
# The kernels of a step run in series, so each is priced on its own bound and the times add:
# GEMMs (all 8,192 scheduled tokens) max(weight bytes, GEMM FLOPs); the prompt's attention max(earlier KV bytes,
# its FLOPs); the 64 decodes' attention max(their KV bytes, their FLOPs). Per GPU, at the datasheet peaks.

# %%
w_layer = 2 * d * d + 2 * d * kvh * hd + 3 * d * ffn
lin_tok = 2 * w_layer * L  # FLOP per token through the weight matmuls, whole model
chunk = claim("chunk_tokens", budget - decodes, unit="tokens")
n_chunks = claim("chunks", math.ceil(n / chunk), unit="chunks")
params = L * w_layer + 2 * fact("llama3_1_70b.vocab_size", "vocab") * d
dctx = given(
    "decode_context", 8192, unit="tokens", source="the question's hypothetical: the running decodes hold 8K each"
)
w_gpu = params * bf16 / tp
kv_tok_gpu = 2 * L * kvh * hd * bf16 / tp
kv_decodes = claim("decode_kv_bytes_per_gpu", decodes * dctx * kv_tok_gpu, unit="B")
flops_gpu = tp * peak * 1e12  # node FLOP/s; work below is whole-node FLOP, split evenly by TP
bw_b = bw * 1e12


def attn_flop(start: float, size: float) -> float:
    """Attention FLOP of a prefill chunk of `size` queries starting at `start` (causal within the chunk)."""
    return coeff * d * size * (start + size / 2) * L


def gemm_time(tokens: float) -> float:
    return max(w_gpu / bw_b, lin_tok * tokens / flops_gpu)


def prefill_attn_time(start: float, size: float) -> float:
    return max(start * kv_tok_gpu / bw_b, attn_flop(start, size) / flops_gpu)


# decode attention: one query per request over its 8K context; intensity = GQA group size, far below the ridge
decode_attn_t = claim("decode_attn_time", max(kv_decodes / bw_b, coeff * d * dctx * L * decodes / flops_gpu), unit="s")


def step_time(start: float, size: float, n_decodes: float) -> float:
    """One chunk step: GEMMs for chunk + decodes, the chunk's attention, the decodes' attention, in series."""
    return gemm_time(size + n_decodes) + prefill_attn_time(start, size) + decode_attn_t


def step_flop(start: float, size: float) -> float:
    """FLOP of one prefill chunk of `size` tokens starting at position `start` (all layers)."""
    return lin_tok * size + attn_flop(start, size)


starts = [i * chunk for i in range(int(n_chunks))]
sizes = [min(chunk, n - s) for s in starts]
flops = [step_flop(s, z) for s, z in zip(starts, sizes, strict=True)]
t = [step_time(s, z, decodes) for s, z in zip(starts, sizes, strict=True)]
first = claim("first_chunk_time", t[0], unit="s")
last_full = claim("last_full_chunk_time", t[-2], unit="s")
claim("last_over_first", t[-2] / t[0], unit="x")
ttft = claim("ttft_chunked_at_peak", sum(f / flops_gpu for f in flops), unit="s")
oneshot = claim("ttft_oneshot_at_peak", step_flop(0, n) / flops_gpu, unit="s")
check(abs(sum(flops) / step_flop(0, n) - 1) < 0.01, "chunking leaves the total FLOPs unchanged to within 1%")
claim("attn_share_last_chunk", prefill_attn_time(starts[-2], sizes[-2]) / t[-2], unit="fraction")
claim("decode_attn_share_first", decode_attn_t / t[0], unit="fraction")
claim("decode_attn_share_last", decode_attn_t / t[-2], unit="fraction")

# %% [markdown]
# ## The bytes chunking adds: every chunk re-reads the KV of all earlier chunks (per GPU)

# %%
reread = claim("kv_reread_bytes_per_gpu", sum(s * kv_tok_gpu for s in starts), unit="B")
reread_t = claim("kv_reread_time", reread / bw_b, unit="s")
claim("kv_reread_share_of_ttft", reread_t / ttft, unit="fraction")

# %% [markdown]
# ## What the 64 running decodes see
# Their next token waits for the whole step. A decode-only step reads the weights once per GPU and their KV.

# %%
budget_b = fact("vllm.gpu_memory_utilization_default", "gpu_util") * fact("h100_sxm.cuda_total_memory", "cuda_total")
claim("vllm_budget_per_gpu", budget_b, unit="B")
check(w_gpu + kv_decodes + n * kv_tok_gpu <= budget_b, "weights + decode KV + the prompt's KV fit vLLM's budget")
claim("memory_in_use_per_gpu", w_gpu + kv_decodes + n * kv_tok_gpu, unit="B")
decode_step = claim("decode_only_step", gemm_time(decodes) + decode_attn_t, unit="s")
check(gemm_time(decodes) == w_gpu / bw_b, "a 64-token decode step's GEMMs are bandwidth-bound")
# within the last full chunk step: GEMM weight reads against GEMM arithmetic, prefix KV against attention arithmetic
claim("gemm_bytes_over_flops_last", (w_gpu / bw_b) / (lin_tok * (sizes[-2] + decodes) / flops_gpu), unit="fraction")
claim(
    "attn_bytes_over_flops_last",
    (starts[-2] * kv_tok_gpu / bw_b) / (attn_flop(starts[-2], sizes[-2]) / flops_gpu),
    unit="fraction",
)
claim("stall_factor_last_chunk", t[-2] / decode_step, unit="x")
claim("stall_factor_first_chunk", t[0] / decode_step, unit="x")

# %% [markdown]
# ## A smaller budget: 2048 tokens

# %%
chunk_s = claim("chunk_tokens_small", small_budget - decodes, unit="tokens")
n_s = claim("chunks_small_budget", math.ceil(n / chunk_s), unit="chunks")
starts_s = [i * chunk_s for i in range(int(n_s))]
t_s = [step_time(s, min(chunk_s, n - s), decodes) for s in starts_s]
claim("last_full_chunk_time_small", t_s[-2], unit="s")
lin_intensity = claim("linear_intensity_small_chunk", chunk_s * 2 / bf16)
ridge = claim("h100_ridge", peak / bw)
check(lin_intensity > ridge, "a 1,984-token chunk keeps the weight matmuls compute-bound")
reread_s = sum(s * kv_tok_gpu for s in starts_s)
claim("kv_reread_time_small", reread_s / bw_b, unit="s")
print(n_chunks, t[0], t[-2], ttft, reread / 1e9, reread_t, decode_step, decode_attn_t, n_s, t_s[-2], reread_s / bw_b)
