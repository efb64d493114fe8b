# %% [markdown]
# # A shared 6,000-token system prompt under vLLM's prefix cache: prefill, memory and decode reads
# Llama-3.1-70B, BF16 weights and KV, TP=8 on one H100 node, vLLM v0.21 defaults. Every request is the same
# system prompt followed by its own 400-token turn and a 600-token reply. Prefill FLOPs: 2 per parameter per
# token plus causal attention (QK^T and PV: 4 · layers · q_heads · head_dim FLOP per token per earlier position).
# The pool is vLLM's: utilisation × cudaMemGetInfo total − weights − overheads (example figures as in the
# memory-budget answer). Decode reads: weights once per step plus every sequence's KV, unless cascade attention
# reads the common prefix once (vllm/v1/attention/backends/flash_attn.py use_cascade_attention and
# cascade_attention @0084b783: the prefix pass uses block_table[:1], one copy for the whole batch).

# %%
import math

from dense_llama import llama, runtime_overheads

from qbank.verify import check, claim, fact, given

m = llama("llama3_1_70b")
layers, d, nq, nkv, hd, ffn, vocab = m.layers, m.d, m.nq, m.nkv, m.hd, m.ffn, m.vocab
block = fact("vllm.block_size_default", "block_size")
util = fact("vllm.gpu_memory_utilization_default", "util")
cuda_total = fact("h100_sxm.cuda_total_memory", "cuda_total")
bw = fact("h100_sxm.hbm_bandwidth", "h100_bw")
bf16 = fact("h100_sxm.bf16_dense", "h100_bf16")
tp = given("tp_gpus", 8, unit="GPUs", source="the question's hypothetical: TP=8 on one H100 node")
sys_len = given("system_prompt_tokens", 6000, unit="tokens", source="the question's hypothetical")
turn = given("user_turn_tokens", 400, unit="tokens", source="the question's hypothetical")
reply = given("reply_tokens", 600, unit="tokens", source="the question's hypothetical")
overheads = runtime_overheads()
mfu = given("prefill_mfu", 0.5, unit="fraction", source="assumption: achieved share of dense BF16 peak in prefill")
batch = given("decode_batch", 256, unit="sequences", source="the question's hypothetical: 256 running requests")
sms = given(
    "h100_sms",
    132,
    unit="SMs",
    source="NVIDIA H100 Tensor Core GPU Architecture whitepaper: the H100 SXM5 has 132 SMs",
)
min_prefix = given(
    "cascade_min_prefix",
    256,
    unit="tokens",
    source="vllm/v1/attention/backends/flash_attn.py use_cascade_attention @0084b783: common_prefix_len < 256 -> False",
)
min_reqs = given(
    "cascade_min_requests",
    8,
    unit="requests",
    source="same function: num_reqs < 8 -> False",
)
tile = given("kv_tile", 128, unit="tokens", source="same function: kv_tile_size = 128, q_tile_size = 128")

# %% [markdown]
# ## Prefill FLOPs with and without the hit

# %%
params = m.params


prompt = claim("prompt_tokens", sys_len + turn, unit="tokens")
check(sys_len % block == 0, "the system prompt ends on a block boundary, so every one of its blocks is cacheable")
cached = claim("cached_tokens", block * math.floor(sys_len / block), unit="tokens")
full = claim("prefill_flops_miss", m.prefill_flops(0, prompt), unit="FLOP")
hit = claim("prefill_flops_hit", m.prefill_flops(cached, prompt), unit="FLOP")
claim("flops_saved_fraction", 1 - hit / full, unit="fraction")
claim("tokens_saved_fraction", cached / prompt, unit="fraction")
claim("suffix_attention_share_hit", (hit - 2 * params * turn) / hit, unit="fraction")
claim("ttft_compute_miss", full / (tp * mfu * bf16 * 1e12), unit="s")
claim("ttft_compute_hit", hit / (tp * mfu * bf16 * 1e12), unit="s")
claim("prefill_speedup", full / hit, unit="x")

# %% [markdown]
# ## Memory: one shared copy of the prefix against one copy per request

# %%
weights = 2 * params
kv_tok = claim("kv_bytes_per_token", 2 * layers * nkv * hd * 2, unit="B")
pool = claim("pool_bytes", tp * (util * cuda_total - weights / tp - overheads), unit="B")
prefix_bytes = claim("prefix_kv_bytes", cached * kv_tok, unit="B")
private = claim("private_kv_bytes", (prompt + reply - cached) * kv_tok, unit="B")
per_req_unshared = claim("unshared_kv_bytes", (prompt + reply) * kv_tok, unit="B")
n_unshared = claim("requests_unshared", math.floor(pool / per_req_unshared), unit="requests")
n_shared = claim("requests_shared", math.floor((pool - prefix_bytes) / private), unit="requests")
claim("capacity_gain", n_shared / n_unshared, unit="x")
check(n_unshared < batch <= n_shared, "the 256-request batch fits only because the prefix blocks are shared")

# %% [markdown]
# ## Decode reads per step at batch 256, mid-reply (300 reply tokens in), per GPU

# %%
mid = claim("reply_tokens_so_far", reply / 2, unit="tokens")
ctx = prompt + mid
w_gpu = claim("weight_bytes_per_gpu", weights / tp, unit="B")
kv_plain = claim("kv_read_per_gpu_plain", batch * ctx * kv_tok / tp, unit="B")
kv_cascade = claim("kv_read_per_gpu_cascade", (cached + batch * (ctx - cached)) * kv_tok / tp, unit="B")
step_plain = claim("step_plain", (w_gpu + kv_plain) / (bw * 1e12), unit="s")
step_cascade = claim("step_cascade", (w_gpu + kv_cascade) / (bw * 1e12), unit="s")
claim("decode_speedup_cascade", step_plain / step_cascade, unit="x")
claim("kv_share_of_step_plain", kv_plain / (w_gpu + kv_plain), unit="fraction")
l2 = given("h100_l2", 50e6, unit="B", source="NVIDIA H100 Tensor Core GPU Architecture whitepaper: 50 MB L2 cache")
per_layer = claim("prefix_kv_per_layer_per_gpu", cached * 2 * (nkv // tp) * hd * 2, unit="B")
check(
    per_layer < l2, "one layer's prefix KV on one rank fits in L2: re-reads may hit L2, so the plain figure is a bound"
)
# GEMMs and attention are separate kernels: the GEMMs' intensity is the batch, so compare their math with their
# own weight read, not with the whole step.
gemm_cmp = 2 * params * batch / (tp * bf16 * 1e12)
gemm_read = w_gpu / (bw * 1e12)
check(gemm_cmp < gemm_read, "at 256 sequences the GEMMs are still memory-bound on their own roofline")
claim("gemm_compute_over_read", gemm_cmp / gemm_read, unit="fraction")
claim("h100_ridge", bf16 / bw)

# %% [markdown]
# ## vLLM's heuristic: when it chooses cascade for this model at TP8
# Per rank: 8 query heads and 1 KV head (64 and 8 over TP8). Decode queries are single tokens and the GQA group is
# 8 > 1, so the FlashDecoding branch applies and the rough CTA model decides.


# %%
claim("q_heads_per_kv_head", nq / nkv, unit="heads")
claim("q_heads_per_rank", nq / tp, unit="heads")
claim("kv_heads_per_rank", nkv / tp, unit="heads")


def cdiv(a: float, b: float) -> int:
    return -(-int(a) // int(b))


def vllm_uses_cascade(prefix_len: int, n_reqs: int) -> bool:
    """vLLM's use_cascade_attention for single-token decode queries, 8 query heads and 1 KV head per rank."""
    if prefix_len < min_prefix or n_reqs < min_reqs:
        return False
    q_heads, kv_heads = nq // tp, nkv // tp
    prefix_tiles = cdiv(prefix_len, tile)
    cascade_time = cdiv(q_heads * cdiv(n_reqs, tile), sms) * prefix_tiles
    flash_decoding_time = cdiv(n_reqs * kv_heads * cdiv(q_heads // kv_heads, tile) * prefix_tiles, sms)
    return cascade_time < flash_decoding_time


# %%
check(vllm_uses_cascade(int(cached), int(batch)), "at batch 256 vLLM picks cascade attention")
smallest = next(b for b in range(1, 1024) if vllm_uses_cascade(int(cached), b))
claim("cascade_min_batch", smallest, unit="sequences")
check(smallest == sms + 1, "with one prefix tile wave, cascade wins once the batch exceeds the SM count")
b64 = given("small_batch", 64, unit="sequences", source="the question's hypothetical: a quieter hour")
check(not vllm_uses_cascade(int(cached), int(b64)), "at batch 64 vLLM keeps FlashDecoding")
claim("prefix_reread_b64", b64 * cached * kv_tok / tp, unit="B")
