# %% [markdown]
# # INT4 weight-only (AWQ/GPTQ, W4A16) against FP8 W8A8 for Llama-3.1-70B on one H200
# W4A16 stores 4-bit weights with an FP16 scale and a 4-bit zero point per group of 128 weights (the g128 layout
# AWQ, arXiv:2306.00978 §5.1, and GPTQ, arXiv:2210.17323 §5, evaluate) and dequantizes to FP16 inside the GEMM, so
# its arithmetic runs at the BF16/FP16 tensor-core rate (MARLIN, arXiv:2408.11743: an FP16xINT4 kernel). FP8 W8A8
# (per-channel weight and per-token activation scales) runs on FP8 tensor cores at twice that rate. The KV cache
# stays BF16 in both. Every decode step prices the weight reads AND every sequence's KV reads.

# %%
from qbank.verify import check, claim, fact, given

layers = fact("llama3_1_70b.num_hidden_layers", "layers")
hidden = fact("llama3_1_70b.hidden_size", "hidden")
q_heads = fact("llama3_1_70b.num_attention_heads", "q_heads")
kv_heads = fact("llama3_1_70b.num_key_value_heads", "kv_heads")
head_dim = fact("llama3_1_70b.head_dim", "head_dim")
inter = fact("llama3_1_70b.intermediate_size", "inter")
vocab = fact("llama3_1_70b.vocab_size", "vocab")
hbm_bw = fact("h200_sxm.hbm_bandwidth", "hbm_tbs")
bf16_tf = fact("h200_sxm.bf16_dense", "bf16_tflops")
fp8_tf = fact("h200_sxm.fp8_dense", "fp8_tflops")
cuda_total = fact("h200_sxm.cuda_total_memory", "cuda_total")
util = fact("vllm.gpu_memory_utilization_default", "util")
kv_tok = fact("derived.kv_bytes_per_token_llama31_70b_bf16", "kv_per_token")
group = given("group_size", 128, unit="elements", source="AWQ arXiv:2306.00978 §5.1 and GPTQ arXiv:2210.17323 §5: "
              "grouped INT4 with group size 128")
w4_bits = given("int4_bits", 4, unit="bit", source="INT4 weights")
scale_bits = given("group_scale_bits", 16, unit="bit", source="FP16 scale per group (AWQ/GPTQ g128 checkpoints)")
zero_bits = given("group_zero_bits", 4, unit="bit", source="4-bit zero point per group, packed (AWQ/GPTQ asymmetric)")
fp8 = given("fp8_bytes", 1, unit="B", source="FP8 E4M3 weights: 1 byte; per-channel scales negligible")
overheads = given("runtime_overheads", 4.0e9, unit="B", source="example activation peak + non-torch + CUDA graphs, "
                  "as in the max-concurrent-requests-memory-budget answer")
context = given("context", 2048, unit="tokens", source="the question's hypothetical mean context per sequence")
marlin_batch = given("marlin_near_ideal_batch", 32, unit="sequences", source="MARLIN arXiv:2408.11743 abstract: "
                     "close to the maximum 4x speedup up to batch sizes 16-32, gradually decreasing up to 64-128")

# %% [markdown]
# ## Bytes per weight and the weights

# %%
per_layer = hidden * q_heads * head_dim * 2 + 2 * hidden * kv_heads * head_dim + 3 * hidden * inter
linear = layers * per_layer  # the quantized GEMM weights
other = 2 * vocab * hidden  # embedding and LM head stay BF16 in both checkpoints
bits = claim("int4_bits_per_weight", w4_bits + (scale_bits + zero_bits) / group, unit="bit")
w_int4 = claim("weights_int4", linear * bits / 8 + other * 2, unit="B")
w_fp8 = claim("weights_fp8", linear * fp8 + other * 2, unit="B")
claim("weight_ratio", w_int4 / w_fp8, unit="fraction")
request = claim("requested", cuda_total * util, unit="B")
seq_kv = claim("kv_per_seq", context * kv_tok, unit="B")
max_fp8 = claim("max_seqs_fp8", int((request - w_fp8 - overheads) // seq_kv), unit="sequences")
max_int4 = claim("max_seqs_int4", int((request - w_int4 - overheads) // seq_kv), unit="sequences")

# %% [markdown]
# ## Decode: roofline per step (memory time against compute time; the larger wins)

# %%
flops_tok = 2 * (linear + vocab * hidden)  # linear layers and the LM head; attention FLOPs are small at 2K


def step(batch: int, weights: float, peak_tflops: float, kv: float = seq_kv) -> tuple[float, float]:
    """(memory time, compute time) in s of one decode step at `batch` sequences of `kv` bytes each."""
    mem = (weights + batch * kv) / (hbm_bw * 1e12)
    return mem, flops_tok * batch / (peak_tflops * 1e12)


res = {}
for b in (1, 32, 88):
    given(f"batch_{b}", b, unit="sequences", source="the question's batch sweep (88 is near FP8's capacity at 2K)")
    m4, c4 = step(b, w_int4, bf16_tf)
    m8, c8 = step(b, w_fp8, fp8_tf)
    t4, t8 = max(m4, c4), max(m8, c8)
    res[b] = (t4, t8)
    claim(f"t_int4_b{b}", t4, unit="s")
    claim(f"t_fp8_b{b}", t8, unit="s")
    claim(f"speedup_b{b}", t8 / t4, unit="x")
    claim(f"kv_share_fp8_b{b}", b * seq_kv / (w_fp8 + b * seq_kv), unit="fraction")
check(88 <= max_fp8, "batch 88 at 2K context fits with FP8 weights")
ridge4 = claim("ridge_batch_int4_weights_only", w_int4 / (hbm_bw * 1e12) / (flops_tok / (bf16_tf * 1e12)), unit="sequences")
ridge8 = claim("ridge_batch_fp8_weights_only", w_fp8 / (hbm_bw * 1e12) / (flops_tok / (fp8_tf * 1e12)), unit="sequences")

# %% [markdown]
# ## Short contexts, big batches: where W4A16 turns compute-bound
# Derated with the question's hypothetical sustained efficiencies, since near the ridge the roofline is optimistic.

# %%
short = given("short_context", 512, unit="tokens", source="the question's hypothetical short-context workload")
big = given("big_batch", 256, unit="sequences", source="the question's hypothetical large decode batch")
short_kv = short * kv_tok
check(big <= (request - w_fp8 - overheads) // short_kv, "256 sequences of 512 tokens fit with FP8 weights")
m4, c4 = step(big, w_int4, bf16_tf, short_kv)
m8, c8 = step(big, w_fp8, fp8_tf, short_kv)
claim("t_int4_big", max(m4, c4), unit="s")
claim("t_fp8_big", max(m8, c8), unit="s")
claim("int4_compute_over_memory_big", c4 / m4, unit="x")
check(c4 > m4 and m8 > c8, "at batch 256 W4A16 is compute-bound while FP8 W8A8 is still memory-bound")
claim("fp8_speedup_big", max(m4, c4) / max(m8, c8), unit="x")
eff4 = given("int4_mma_efficiency", 0.6, unit="fraction", source="the question's hypothetical sustained fraction of the "
             "BF16 rate for a dequantizing W4A16 GEMM at large batch (MARLIN's speedup decays past batch 32)")
eff8 = given("fp8_mma_efficiency", 0.8, unit="fraction", source="the question's hypothetical sustained FP8 GEMM fraction")
hbm_eff = given("hbm_efficiency", 0.8, unit="fraction", source="the question's hypothetical sustained HBM fraction")
d4 = claim("t_int4_big_derated", max(m4 / hbm_eff, c4 / eff4), unit="s")
d8 = claim("t_fp8_big_derated", max(m8 / hbm_eff, c8 / eff8), unit="s")
claim("fp8_speedup_big_derated", d4 / d8, unit="x")
check(d8 < d4, "derated, FP8 still wins the large-batch short-context case")

# %% [markdown]
# ## Prefill: compute-bound, and the INT4 path computes in BF16

# %%
prompt = given("prompt", 4096, unit="tokens", source="the question's hypothetical prompt")
attn = 4 * layers * prompt**2 * q_heads * head_dim * 0.5  # causal attention, BF16 in both
pf4 = claim("prefill_int4", (flops_tok - 2 * vocab * hidden) * prompt / (bf16_tf * 1e12) + attn / (bf16_tf * 1e12), unit="s")
pf8 = claim("prefill_fp8", (flops_tok - 2 * vocab * hidden) * prompt / (fp8_tf * 1e12) + attn / (bf16_tf * 1e12), unit="s")
claim("prefill_fp8_speedup", pf4 / pf8, unit="x")
check(pf8 < pf4, "FP8 prefills faster: its GEMMs run at twice the tensor-core rate")
print({b: (round(t4 * 1e3, 2), round(t8 * 1e3, 2)) for b, (t4, t8) in res.items()}, round(d4 * 1e3, 2), round(d8 * 1e3, 2))
print(f"prefill int4 {pf4*1e3:.0f} ms fp8 {pf8*1e3:.0f} ms; max seqs fp8 {max_fp8} int4 {max_int4}")
m4, c4 = step(88, w_int4, bf16_tf)
claim("int4_compute_over_memory_b88", c4 / m4, unit="fraction")
claim("gemm_params", linear, unit="params")
claim("fp8_over_bf16_rate", fp8_tf / bf16_tf, unit="x")
