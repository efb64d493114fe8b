# %% [markdown]
# # NVFP4 against FP8 weights for Llama-3.1-405B on one HGX B200 node
# NVFP4: E2M1 values (4 bits) in blocks of 16 with one UE4M3 (FP8) scale per block and one FP32 scale per tensor
# (NVIDIA's two-level scaling; Intel Neural Compressor's NVFP4 table; NeMo Automodel's nvfp4 module: "0.5625 bytes
# per parameter"). FP8 KV cache in both cases (1 byte per value). A decode step reads the weights once plus every
# sequence's KV; the headroom bound is node HBM minus weights. Prefill FLOP rates from the HGX B200 table.

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


def step(w: float, batch: int) -> float:
    """Decode step: weights once plus each sequence's KV, at datasheet bandwidth."""
    return (w + batch * kv_req) / bw


for tag, b in (("small", small), ("large", large)):
    s8, s4 = step(w8, int(b)), step(w4, int(b))
    claim(f"step_fp8_{tag}", s8, unit="s")
    claim(f"step_nvfp4_{tag}", s4, unit="s")
    claim(f"decode_gain_{tag}", s8 / s4, unit="x")
    claim(f"kv_share_fp8_{tag}", b * kv_req / (w8 + b * kv_req), unit="fraction")
    check(w8 + b * kv_req <= node, f"batch {b} fits with FP8 weights")

b8 = claim("max_batch_fp8", math.floor((node - w8) / kv_req), unit="requests")
b4 = claim("max_batch_nvfp4", math.floor((node - w4) / kv_req), unit="requests")
claim("headroom_fp8", node - w8, unit="B")
claim("headroom_nvfp4", node - w4, unit="B")
t8 = b8 / step(w8, b8)
t4 = b4 / step(w4, b4)
claim("tps_fp8_full", t8, unit="tokens/s")
claim("tps_nvfp4_full", t4, unit="tokens/s")
claim("step_full_fp8", step(w8, b8), unit="s")
claim("capacity_gain", t4 / t8, unit="x")
claim("capacity_gain_fraction", t4 / t8 - 1, unit="fraction")
check(2 * params * b4 / (n * fp4_tf * 1e12) < 0.5 * step(w4, b4), "full-batch decode stays bandwidth-bound")
check(2 * params * b8 / (n * fp8_tf * 1e12) < 0.5 * step(w8, b8), "full-batch FP8 decode stays bandwidth-bound")
claim("decode_batch_for_even_split", w8 / kv_req, unit="sequences")
claim("compute_share_fp8_full", 2 * params * b8 / (n * fp8_tf * 1e12) / step(w8, b8), unit="fraction")

# %% [markdown]
# ## Prefill: the FP4 FLOP line needs FP4 activations too

# %%
pf8 = claim("prefill_fp8", 2 * params * prompt / (n * fp8_tf * 1e12), unit="s")
pf4 = claim("prefill_w4a4", 2 * params * prompt / (n * fp4_tf * 1e12), unit="s")
claim("prefill_gain_w4a4", pf8 / pf4, unit="x")
claim("fp4_over_fp8_rate", fp4_tf / fp8_tf, unit="x")
