# %% [markdown]
# # NVFP4 against FP8 weights for Llama-3.1-405B on one HGX B200 node
# NVFP4: E2M1 values (4 bits) in blocks of 16 with one UE4M3 (FP8) scale per block and one FP32 scale per tensor
# (NVIDIA's two-level scaling; Intel Neural Compressor's NVFP4 table; NeMo Automodel's nvfp4 module: "0.5625 bytes
# per parameter"). FP8 KV cache in both cases (1 byte per value). A decode step runs the GEMMs (weights read once,
# 2P FLOP per sequence at the rate of the format the GEMM multiplies in) and attention (each sequence's KV read
# once, in BF16 math) in series: each kernel max(bytes / BW, FLOPs / peak), summed. The headroom bound is node
# HBM minus weights. FLOP rates from the HGX B200 table.

# %%
import math

from datasheets import sheet
from dense_llama import llama

from qbank.verify import check, claim, fact, given

m = llama("llama3_1_405b")
layers, d, nq, nkv, hd, ffn, vocab = m.layers, m.d, m.nq, m.nkv, m.hd, m.ffn, m.vocab
cap = fact("b200_hgx.hbm_capacity", "b200_hbm")
bw1 = fact("b200_hgx.hbm_bandwidth", "b200_bw")
fp8_tf = fact("b200_hgx.fp8_dense", "b200_fp8")
fp4_tf = sheet("b200", "fp4", "b200_fp4")
n = given("gpus", 8, unit="GPUs", source="one HGX B200 node, TP=8 (equal to the 8 KV heads)")
elem_bits = given(
    "nvfp4_element_bits",
    4,
    unit="bit",
    source="NVFP4 element: FP4 E2M1 (Intel Neural Compressor docs, NVFP4 table: element data type E2M1, 4 bits)",
)
block = given("nvfp4_block", 16, unit="elements", source="same table: scaling block size 16")
scale_bits = given("nvfp4_scale_bits", 8, unit="bit", source="same table: block scale UE4M3, 8 bits")
ctx = given("context_tokens", 8192, unit="tokens", source="the question's hypothetical: 8K tokens per request")
small = given("small_batch", 64, unit="sequences", source="the question's hypothetical")
large = given("large_batch", 256, unit="sequences", source="the question's hypothetical")
prompt = given("prompt_tokens", 8192, unit="tokens", source="the question's hypothetical: an 8K-token prompt")

# %%
params = m.params
bytes_fp4 = claim("nvfp4_bytes_per_param", (elem_bits + scale_bits / block) / 8, unit="B")
w8 = claim("weights_fp8", params * 1, unit="B")
w4 = claim("weights_nvfp4", params * bytes_fp4, unit="B")
claim("weight_ratio", w4 / w8, unit="fraction")
claim("naive_ratio", elem_bits / 8, unit="fraction")
claim("node_hbm", n * cap * 1e9, unit="B")
claim("fp8_weight_share_of_node", w8 / (n * cap * 1e9), unit="fraction")
kv_req = claim("kv_bytes_per_request_fp8", 2 * layers * nkv * hd * 1 * ctx, unit="B")
node = n * cap * 1e9
bw = n * bw1 * 1e12
bf16_tf = fact("b200_hgx.bf16_dense", "b200_bf16")
attn_flops_tok = 4 * layers * nq * hd  # per sequence per cached position: QK^T and PV
# The three ways to run each checkpoint's GEMMs: weight bytes and the tensor-core rate they multiply at.
modes = {"fp8": (w8, fp8_tf), "w4a4": (w4, fp4_tf), "w4a8": (w4, fp8_tf)}


def step(mode: str, batch: int) -> tuple[float, float, float]:
    """(step, GEMM compute time, GEMM weight-read time): GEMMs and attention priced separately, then summed."""
    w, rate = modes[mode]
    gemm_mem, gemm_cmp = w / bw, 2 * params * batch / (n * rate * 1e12)
    attn = max(batch * kv_req / bw, batch * attn_flops_tok * ctx / (n * bf16_tf * 1e12))
    return max(gemm_mem, gemm_cmp) + attn, gemm_cmp, gemm_mem


for tag, b in (("small", small), ("large", large)):
    s8, s4, s48 = step("fp8", int(b))[0], step("w4a4", int(b))[0], step("w4a8", int(b))[0]
    claim(f"step_fp8_{tag}", s8, unit="s")
    claim(f"step_nvfp4_{tag}", s4, unit="s")
    claim(f"step_w4a8_{tag}", s48, unit="s")
    claim(f"decode_gain_{tag}", s8 / s4, unit="x")
    claim(f"decode_gain_w4a8_{tag}", s8 / s48, unit="x")
    claim(f"kv_share_fp8_{tag}", b * kv_req / (w8 + b * kv_req), unit="fraction")
    check(w8 + b * kv_req <= node, f"batch {b} fits with FP8 weights")
_, cmp_w4a8_large, mem_w4_large = step("w4a8", int(large))
claim("w4a8_gemm_compute_over_read_large", cmp_w4a8_large / mem_w4_large, unit="x")
check(cmp_w4a8_large > mem_w4_large, "at 256 sequences the W4A8 GEMMs are compute-bound at the FP8 rate")
_, cmp8_l, mem8_l = step("fp8", int(large))
claim("fp8_gemm_compute_share_of_read_large", cmp8_l / mem8_l, unit="fraction")
check(cmp8_l < mem8_l, "at 256 sequences the FP8 GEMMs are still memory-bound")

b8 = claim("max_batch_fp8", math.floor((node - w8) / kv_req), unit="requests")
b4 = claim("max_batch_nvfp4", math.floor((node - w4) / kv_req), unit="requests")
claim("headroom_fp8", node - w8, unit="B")
claim("headroom_nvfp4", node - w4, unit="B")
full = {mode: step(mode, bb) for mode, bb in (("fp8", b8), ("w4a4", b4), ("w4a8", b4))}
t8 = claim("tps_fp8_full", b8 / full["fp8"][0], unit="tokens/s")
t4 = claim("tps_nvfp4_full", b4 / full["w4a4"][0], unit="tokens/s")
t48 = claim("tps_w4a8_full", b4 / full["w4a8"][0], unit="tokens/s")
claim("step_full_fp8", full["fp8"][0], unit="s")
claim("step_full_nvfp4", full["w4a4"][0], unit="s")
claim("capacity_gain", t4 / t8, unit="x")
claim("capacity_gain_fraction", t4 / t8 - 1, unit="fraction")
claim("capacity_gain_w4a8", t48 / t8, unit="x")
check(full["fp8"][1] > full["fp8"][2], "at the full FP8 batch the GEMMs are compute-bound")
claim("fp8_gemm_compute_over_read_full", full["fp8"][1] / full["fp8"][2], unit="x")
claim("decode_batch_for_even_split", w8 / kv_req, unit="sequences")
# GEMM intensity is 2B / bytes-per-weight FLOP per byte, so each format's GEMMs reach their ridge at this batch.
for mode, (w, rate) in modes.items():
    claim(f"{mode}_gemm_ridge_batch", rate / bw1 * (w / params) / 2, unit="sequences")

# %% [markdown]
# ## Prefill: the FP4 FLOP line needs FP4 activations too

# %%
pf8 = claim("prefill_fp8", 2 * params * prompt / (n * fp8_tf * 1e12), unit="s")
pf4 = claim("prefill_w4a4", 2 * params * prompt / (n * fp4_tf * 1e12), unit="s")
claim("prefill_gain_w4a4", pf8 / pf4, unit="x")
claim("fp4_over_fp8_rate", fp4_tf / fp8_tf, unit="x")
