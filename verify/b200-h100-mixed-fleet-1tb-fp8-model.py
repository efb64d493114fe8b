# %% [markdown]
# # A 1 TB FP8 model on B200 and H100 nodes
# Model: Kimi K2 (MoonshotAI/Kimi-K2 README @11062d11: 1T total, 32B activated parameters, 61 layers, MLA,
# released in FP8), 1 byte per parameter. Its MLA latent is assumed to match DeepSeek-V3's (512 + 64 values
# per layer, bf16), i.e. the fact base's 70,272 B per token; the README does not list the latent width.
# GPUs from the fact base; B200 at the HGX figures (180 GB, 7.7 TB/s), the confirmed pair.
# Seed check: "needs four H100 nodes" is not what the arithmetic says: two hold the weights, three match a
# B200 node's headroom; four is a power-of-two pipeline choice, not a requirement. The answer says so.
# Workload and efficiency figures are labelled assumptions.

# %%
import math

import torch

from qbank.verify import check, claim, fact, given

total = given("total_params", 1.0e12, unit="params", source="MoonshotAI/Kimi-K2 README.md "
    "@11062d119a82873f7f786cd2733c57d42ee65b79, Model Summary: 1T total")
active = given("active_params", 32e9, unit="params", source="same README: 32B activated parameters")
kv_tok = fact("derived.kv_bytes_per_token_deepseek_v3_mla_bf16", "kv_bytes_per_token")
h_cap = fact("h100_sxm.hbm_capacity", "h100_hbm")
b_cap = fact("b200_hgx.hbm_capacity", "b200_hbm")
b_cap_192 = given("b200_hbm_192", 192, unit="GB", source="widely quoted B200 capacity (facts: "
    "b200_hgx.hbm_capacity note)")
h200_cap = fact("h200_sxm.hbm_capacity", "h200_hbm")
gpn = fact("h100_sxm.nvlink_domain", "gpus_per_node")
b_bw = fact("b200_hgx.hbm_bandwidth", "b200_bw")
h_fp8 = fact("h100_sxm.fp8_dense", "h100_fp8")
b_fp8 = fact("b200_hgx.fp8_dense", "b200_fp8")
mfu = given("prefill_mfu", 0.4, unit="fraction", source="assumed prefill model-FLOPs utilisation for a large MoE")
reserve = given("runtime_reserve_node", 40e9, unit="B", source="assumed activation/graph/NCCL reserve per 8-GPU node")
prompt = given("prompt_tokens", 2000, unit="tokens", source="assumed chat workload: mean prompt")
output = given("output_tokens", 500, unit="tokens", source="assumed chat workload: mean reply")
ctx = given("decode_context", 8192, unit="tokens", source="assumed KV reservation per live request")
rate = given("target_rps", 300, unit="requests", source="example target: requests per second")

# %% [markdown]
# ## Fit

# %%
weights = claim("weights", total * 1, unit="B")
b_node = claim("b200_node_hbm", gpn * b_cap * 1e9, unit="B")
h_node = claim("h100_node_hbm", gpn * h_cap * 1e9, unit="B")
b_head = claim("b200_node_headroom", b_node - weights, unit="B")
h_nodes_weights = claim("h100_nodes_for_weights", math.ceil(weights / h_node), unit="nodes")
h_nodes_match = claim("h100_nodes_to_match_b200_headroom", math.ceil((weights + b_head) / h_node), unit="nodes")
h2_head = claim("h100_two_node_headroom", h_nodes_weights * h_node - weights, unit="B")
claim("b200_node_hbm_192", gpn * b_cap_192 * 1e9, unit="B")
h200_node = claim("h200_node_hbm", gpn * h200_cap * 1e9, unit="B")
check(b_node > weights > h_node, "fits one B200 node, not one H100 node")
check(h_nodes_weights == 2 and h_nodes_match == 3, "two H100 nodes hold it, three match the B200 headroom; four "
    "is not required")
check(h200_node > weights, "an H200 node (1,128 GB) would also hold it")

# %% [markdown]
# ## Decode pool on B200 nodes (single-node replicas, bandwidth-bound)

# %%
kv_req = claim("kv_per_request", kv_tok * ctx, unit="B")
batch = claim("decode_batch", math.floor((b_head - reserve) / kv_req), unit="requests")
step = claim("decode_step", (weights + batch * kv_req) / (gpn * b_bw * 1e12), unit="s")
step_compute = 2 * active * batch / (gpn * b_fp8 * 1e12)
check(step_compute < step / 5, "decode step is bandwidth-bound")
per_user = claim("per_user_tps", 1 / step, unit="tokens/s")
node_tps = claim("b200_node_decode_tps", batch / step, unit="tokens/s")
node_rps = claim("b200_node_decode_rps", node_tps / output, unit="requests")

# %% [markdown]
# ## Prefill pool on H100 pairs (two nodes per instance, compute-bound)

# %%
two = given("flops_per_param", 2, unit="FLOP", source="one multiply-add per active parameter per token")
pf_flops = claim("prefill_flops_per_token", two * active, unit="FLOP")
inst_tps = claim("h100_instance_prefill_tps", h_nodes_weights * gpn * h_fp8 * 1e12 * mfu / pf_flops, unit="tokens/s")
inst_rps = claim("h100_instance_prefill_rps", inst_tps / prompt, unit="requests")
b_nodes = claim("b200_decode_nodes", math.ceil(rate / node_rps), unit="nodes")
h_inst = claim("h100_prefill_instances", math.ceil(rate / inst_rps), unit="instances")
h_nodes_total = claim("h100_prefill_nodes", h_inst * h_nodes_weights, unit="nodes")

# %% [markdown]
# ## The precision mismatch, measured on a small layer
# Same bf16 weight matrix, quantized to E4M3 two ways: 128x128 blocks with FP32 scales (the DeepSeek-style
# checkpoint layout Hopper kernels run) and 1x32 blocks with power-of-two (E8M0) scales (the MXFP8 layout
# Blackwell runs natively). Both are "FP8 weights"; they are different functions.

# %%
blk = int(given("hopper_block", 128, unit="elements", source="DeepSeek-V3 FP8 checkpoint layout: 128x128 weight "
    "blocks (arXiv:2412.19437 §3.3.2)"))
mx = int(given("mx_block", 32, unit="elements", source="OCP Microscaling (MX) spec v1.0: 32-element blocks, "
    "E8M0 scales"))
torch.manual_seed(0)
W = torch.randn(512, 512) * 0.02
W[:, 7] *= 20  # an outlier input channel, as real layers have
x = torch.randn(64, 512)
E4M3_MAX = 448.0


def q_block(w: torch.Tensor, rows: int, cols: int, pow2: bool) -> torch.Tensor:
    """Fake-quantize w to E4M3 with one scale per rows x cols block (power-of-two scales if pow2)."""
    out = torch.empty_like(w)
    for i in range(0, w.shape[0], rows):
        for j in range(0, w.shape[1], cols):
            blk = w[i:i + rows, j:j + cols]
            s = blk.abs().max().clamp(min=1e-12) / E4M3_MAX
            if pow2:
                s = torch.exp2(torch.ceil(torch.log2(s)))
            out[i:i + rows, j:j + cols] = (blk / s).to(torch.float8_e4m3fn).float() * s
    return out


ref = x @ W.T
ya = x @ q_block(W, blk, blk, False).T
yb = x @ q_block(W, 1, mx, True).T


def rel(a: torch.Tensor, b: torch.Tensor) -> float:
    """Relative Frobenius error."""
    return float((a - b).norm() / b.norm())


err_a = claim("err_block128", rel(ya, ref), unit="fraction")
err_b = claim("err_mx32", rel(yb, ref), unit="fraction")
err_ab = claim("err_between_layouts", rel(ya, yb), unit="fraction")
check(err_ab > 0.3 * min(err_a, err_b), "the two FP8 layouts disagree by as much as either differs from bf16")

# %% [markdown]
# ## If the Blackwell side moves to FP4
# NVFP4 (NVIDIA, "Introducing NVFP4 for Efficient and Accurate Low-Precision Inference", developer blog 2025):
# E2M1 values (0, 0.5, 1, 1.5, 2, 3, 4, 6), one E4M3 scale per 16-element block, and an FP32 per-tensor scale
# chosen so the largest block scale lands at E4M3's maximum (without it, small block scales fall into E4M3's
# subnormal range and lose precision). How far is that from the Hopper FP8 layout the prefill side runs?

# %%
nv_blk = int(given("nvfp4_block", 16, unit="elements", source="NVIDIA NVFP4 developer blog (2025): 16-value "
    "micro-blocks with an FP8 E4M3 scale"))
E2M1 = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


def q_nvfp4(w: torch.Tensor) -> torch.Tensor:
    """Fake-quantize w to E2M1 with one E4M3-rounded scale per 1 x 16 block."""
    blocks = w.reshape(w.shape[0], -1, nv_blk)
    g = w.abs().max() / (6.0 * E4M3_MAX)  # FP32 per-tensor scale
    s = (blocks.abs().amax(-1, keepdim=True) / (6.0 * g)).clamp(min=2.0**-9)
    s = s.to(torch.float8_e4m3fn).float() * g
    v = blocks / s
    idx = (v.abs().unsqueeze(-1) - E2M1).abs().argmin(-1)
    return (torch.sign(v) * E2M1[idx] * s).reshape(w.shape)


yc = x @ q_nvfp4(W).T
err_c = claim("err_nvfp4", rel(yc, ref), unit="fraction")
err_ac = claim("err_fp8_vs_nvfp4", rel(ya, yc), unit="fraction")
gap_growth = claim("fp4_gap_growth", err_ac / err_ab, unit="x")
check(err_ac > 2 * err_ab, "an FP8 prefill feeding an FP4 decode disagrees several times more than two FP8 layouts")
print(f"B200 node {b_node/1e9:.0f} GB headroom {b_head/1e9:.0f}; H100 2-node headroom {h2_head/1e9:.0f}")
print(f"kv/req {kv_req/1e6:.0f} MB batch {batch} step {step*1e3:.2f} ms user {per_user:.1f} node {node_tps:.0f} "
    "tok/s {node_rps:.1f} rps")
print(f"prefill inst {inst_tps:.0f} tok/s {inst_rps:.1f} rps; B200 nodes {b_nodes} H100 inst {h_inst} nodes "
    "{h_nodes_total}")
print(err_a, err_b, err_ab, err_c, err_ac, gap_growth)
