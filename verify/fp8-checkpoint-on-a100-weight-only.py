# %% [markdown]
# # An FP8 checkpoint on A100s: what weight-only FP8 buys in decode and in prefill
# The A100 is compute capability 8.0 and has no FP8 Tensor Cores. vLLM's FP8 path then runs weight-only
# (W8A16): vllm/model_executor/layers/quantization/fp8.py sets use_marlin = not has_device_capability(89)
# ("For GPUs that lack FP8 hardware support, we can leverage the Marlin kernel for fast weight-only FP8
# quantization"); the FP8 docs say "Ampere GPUs are supported for W8A16 (weight-only FP8) utilizing Marlin kernels".
# So weights are read as 1 byte and the matmuls run in BF16 on the Tensor Cores at the BF16 rate.
# Model: Llama-3.1-70B at TP2 on two A100 80GB SXM; BF16 KV cache; datasheet HBM less weights as the KV bound.

# %%
import math

from datasheets import sheet
from dense_llama import llama

from qbank.verify import check, claim, fact, given

m = llama("llama3_1_70b")
layers, d, nq, nkv, hd, ffn, vocab = m.layers, m.d, m.nq, m.nkv, m.hd, m.ffn, m.vocab
a_bf16 = sheet("a100", "bf16")
a_bw = sheet("a100", "bw")
a_hbm = sheet("a100", "hbm")
h_fp8 = fact("h100_sxm.fp8_dense", "h100_fp8")
capability = given(
    "a100_compute_capability",
    8.0,
    source="CUDA deviceQuery on A100: 'CUDA Capability Major/Minor version number: 8.0' (upb-pc2 A100 cluster page)",
)
fp8_min_capability = given(
    "fp8_min_capability",
    8.9,
    source="vllm/model_executor/layers/quantization/fp8.py: use_marlin = not has_device_capability(89)",
)
check(capability < fp8_min_capability, "A100 takes vLLM's weight-only FP8 (Marlin) path")
tp = given("tp_gpus", 2, unit="GPUs", source="the question's hypothetical: TP=2, the smallest A100 layout for BF16")
ctx = given("context_tokens", 4096, unit="tokens", source="the question's hypothetical: 4K tokens per request")
small = given("small_batch", 8, unit="sequences", source="the question's hypothetical: an 8-sequence batch")
prompt = given("prompt_tokens", 4096, unit="tokens", source="the question's hypothetical: a 4K-token prompt")

# %% [markdown]
# ## Bytes, capacity and the decode step

# %%
params = m.params
w_bf16 = claim("weights_bf16", 2 * params, unit="B")
fp8_bytes = given("fp8_bytes_per_weight", 1, unit="B", source="FP8 (E4M3) stores one byte per weight")
w_fp8 = claim("weights_fp8", params * fp8_bytes, unit="B")
claim("weight_byte_ratio", w_fp8 / w_bf16, unit="x")
kv_req = claim("kv_bytes_per_request", 2 * layers * nkv * hd * 2 * ctx, unit="B")
node = claim("hbm_two_gpus", tp * a_hbm * 1e9, unit="B")
bw = tp * a_bw * 1e12


def step(weights: float, batch: int) -> float:
    """Decode step time: weights plus every request's KV read once at datasheet bandwidth."""
    return (weights + batch * kv_req) / bw


s_bf16 = claim("step_bf16_b8", step(w_bf16, int(small)), unit="s")
s_fp8 = claim("step_fp8_b8", step(w_fp8, int(small)), unit="s")
claim("decode_speedup_b8", s_bf16 / s_fp8, unit="x")
check(w_bf16 + small * kv_req <= node, "batch 8 fits even in BF16")

head_bf16 = claim("headroom_bf16", node - w_bf16, unit="B")
head_fp8 = claim("headroom_fp8", node - w_fp8, unit="B")
b_bf16 = claim("max_batch_bf16", math.floor(head_bf16 / kv_req), unit="requests")
b_fp8 = claim("max_batch_fp8", math.floor(head_fp8 / kv_req), unit="requests")
t_bf16 = claim("tps_bf16_full", b_bf16 / step(w_bf16, b_bf16), unit="tokens/s")
t_fp8 = claim("tps_fp8_full", b_fp8 / step(w_fp8, b_fp8), unit="tokens/s")
claim("throughput_gain_full", t_fp8 / t_bf16, unit="x")
claim("step_fp8_full", step(w_fp8, b_fp8), unit="s")
claim("kv_share_fp8_full", b_fp8 * kv_req / (w_fp8 + b_fp8 * kv_req), unit="fraction")

# Compute stays BF16. Price the GEMMs on their own roofline (the attention kernel reads the KV separately, in
# series): weight-only FP8 GEMMs do 2P FLOP per sequence against P bytes, so they reach the ridge at ridge / 2.
gemm_cmp_full = 2 * params * b_fp8 / (tp * a_bf16 * 1e12)
gemm_read_full = w_fp8 / bw
check(gemm_cmp_full < gemm_read_full, "at the full FP8 batch the W8A16 GEMMs are still memory-bound")
claim("gemm_compute_over_read_fp8_full", gemm_cmp_full / gemm_read_full, unit="fraction")
check(b_fp8 < a_bf16 / a_bw / 2, "the pair's HBM stops the batch before the GEMMs reach the ridge")

# %% [markdown]
# ## Prefill: FLOPs do not change

# %%
pf = 2 * params * prompt / (tp * a_bf16 * 1e12)
claim("prefill_a100_any_weights", pf, unit="s")
claim("prefill_h100_fp8", 2 * params * prompt / (tp * h_fp8 * 1e12), unit="s")
claim("h100_fp8_over_a100_bf16", h_fp8 / a_bf16, unit="x")
claim("a100_ridge", a_bf16 / a_bw)
claim("fp8_weight_only_ridge_batch", a_bf16 / a_bw / 2, unit="sequences")
