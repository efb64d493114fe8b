# %% [markdown]
# # Decode at 128K on Llama-3.1-70B: the KV reads that batching cannot share
# Shape from the fact base (Meta sku_list.py); H100 SXM datasheet bandwidth and dense BF16 peak; the device total
# as cudaMemGetInfo reports it (what vLLM multiplies by gpu_memory_utilization). One HGX node, TP=8, BF16 weights.

# %%
from qbank.verify import check, claim, fact, given

L = fact("llama3_1_70b.num_hidden_layers", "layers")
d = fact("llama3_1_70b.hidden_size", "hidden")
h = fact("llama3_1_70b.num_attention_heads", "q_heads")
kvh = fact("llama3_1_70b.num_key_value_heads", "kv_heads")
hd = fact("llama3_1_70b.head_dim", "head_dim")
ffn = fact("llama3_1_70b.intermediate_size", "ffn")
vocab = fact("llama3_1_70b.vocab_size", "vocab")
bw = fact("h100_sxm.hbm_bandwidth", "hbm_bw")
peak = fact("h100_sxm.bf16_dense", "bf16_flops")
total_mem = fact("h100_sxm.cuda_total_memory", "cuda_total")
util = fact("vllm.gpu_memory_utilization_default", "gpu_util")
tp = given("tp_gpus", 8, unit="GPUs", source="the question's hypothetical: one 8-GPU HGX H100 node")
bf16 = given("bf16_bytes", 2, unit="B", source="BF16: 2 bytes per element")
fp8 = given("fp8_bytes", 1, unit="B", source="FP8 E4M3 KV cache: 1 byte per element")
n_long = given("context", 131072, unit="tokens", source="128K read as 2^17 tokens (Llama-3.1 native context)")
given(
    "gpu_util_before_v0_21",
    0.9,
    unit="fraction",
    source="vLLM docs v0.6.4 EngineArgs 'default value of 0.9' (PR #2162); raised to 0.92 by PR #38284 (facts: vllm)",
)
kv_t = given("kv_tensors", 2, source="a layer caches two tensors per token, K and V")
coeff = given("attn_matmul_coeff", 4, source="QK^T and PV: 2 FLOP per multiply-add, two matmuls per query head")
n_short = given("short_context", 8192, unit="tokens", source="comparison point: an 8K chat context")

# %% [markdown]
# ## Bytes: weights shared by the batch, KV private to each sequence
# With TP=8 and 8 KV heads, each GPU holds exactly one KV head per layer (no replication).

# %%
check(tp == kvh, "TP equals the KV-head count: one KV head per GPU, nothing replicated")
params = L * (2 * d * d + 2 * d * kvh * hd + 3 * d * ffn) + 2 * vocab * d
w_gpu = claim("weight_bytes_per_gpu", params * bf16 / tp, unit="B")
kv_tok = claim("kv_bytes_per_token", kv_t * L * kvh * hd * bf16, unit="B")
kv_tok_gpu = kv_tok / tp
pool = claim("kv_pool_upper_bound", util * total_mem - w_gpu, unit="B")
budget = claim("vllm_budget_per_gpu", util * total_mem, unit="B")


def fit(tokens: float, elem: float) -> tuple[int, float, float]:
    """Sequences that fit per GPU, bytes read per step per GPU, step time at datasheet bandwidth."""
    per_seq = kv_tok_gpu * tokens * elem / bf16
    seqs = int(pool // per_seq)
    read = w_gpu + seqs * per_seq
    check(w_gpu + seqs * per_seq <= util * total_mem, "weights + KV fit the engine's budget")
    return seqs, read, read / (bw * 1e12)


seq_long, read_long, t_long = fit(n_long, bf16)
seq_short, read_short, t_short = fit(n_short, bf16)
seq_fp8, read_fp8, t_fp8 = fit(n_long, fp8)
claim("kv_per_seq_per_gpu_128k", kv_tok_gpu * n_long, unit="B")
claim("seqs_128k", seq_long, unit="sequences")
claim("seqs_8k", seq_short, unit="sequences")
claim("seqs_128k_fp8", seq_fp8, unit="sequences")
claim("step_bytes_128k", read_long, unit="B")
claim("step_time_128k", t_long, unit="s")
claim("step_time_8k", t_short, unit="s")
claim("step_time_128k_fp8", t_fp8, unit="s")
kv_share = claim("kv_share_of_step_128k", 1 - w_gpu / read_long, unit="fraction")
tps_long = claim("tokens_per_s_128k", seq_long / t_long, unit="tokens/s")
tps_short = claim("tokens_per_s_8k", seq_short / t_short, unit="tokens/s")
tps_fp8 = claim("tokens_per_s_128k_fp8", seq_fp8 / t_fp8, unit="tokens/s")
claim("throughput_ratio_8k_over_128k", tps_short / tps_long, unit="x")
check(seq_long == 11, "11 sequences of 128K fit per node")
claim("kv_heads_per_gpu", kvh / tp, unit="heads")
fact("h100_sxm.hbm_capacity", "hbm_capacity")
claim("fp8_kv_factor", fp8 / bf16, unit="x")
claim("fp8_seq_ratio", seq_fp8 / seq_long, unit="x")
claim("fp8_tps_ratio", tps_fp8 / tps_long, unit="x")

# %% [markdown]
# ## Arithmetic intensity: why batching cannot help attention
# One decode query per sequence: QK^T and PV cost 4 * n * heads * head_dim FLOP per layer and read
# 2 * n * kv_heads * head_dim elements. Intensity = heads / kv_heads FLOP per element, independent of the batch.

# %%
attn_flop = coeff * n_long * h * hd
attn_bytes = kv_t * n_long * kvh * hd * bf16
ai_attn = claim("attn_intensity", attn_flop / attn_bytes)
ai_attn_fp8 = claim("attn_intensity_fp8", attn_flop / (attn_bytes * fp8 / bf16))
ridge = claim("h100_ridge", peak / bw)
claim("attn_fraction_of_ridge", ai_attn / ridge, unit="fraction")
ai_weights = claim("weight_intensity_at_batch", 2 * seq_long / bf16)
check(ai_attn == h / kvh, "decode attention intensity = GQA group size (FLOP per byte in BF16)")
check(ai_attn < ridge / 10 and ai_weights < ridge / 10, "both parts are far below the ridge: the bound is bandwidth")
print(
    f"weights/GPU {w_gpu / 1e9:.2f} GB; pool <= {pool / 1e9:.2f} GB; 128K: {seq_long} seqs, {read_long / 1e9:.1f} GB,"
)
print(f"{t_long * 1e3:.1f} ms, {tps_long:.0f} tok/s; 8K: {seq_short} seqs {t_short * 1e3:.1f} ms {tps_short:.0f} tok/s")
print(f"fp8 KV: {seq_fp8} seqs, {t_fp8 * 1e3:.1f} ms, {tps_fp8:.0f} tok/s; AI attn {ai_attn}, ridge {ridge:.0f}")
