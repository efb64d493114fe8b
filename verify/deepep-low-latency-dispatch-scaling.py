# %% [markdown]
# # DeepEP's low-latency kernels: why dispatch latency flattens past EP64, and what it costs per decode step
# Measured latencies: github:deepseek-ai/DeepEP docs/legacy.md @0297fc801788b14b338a46554faca28d419e518a, "Low-latency
# kernels with pure RDMA": H800, one CX7 400 Gb/s RDMA NIC per GPU (~50 GB/s), 128 tokens per batch, hidden 7168,
# top-8 experts, FP8 dispatch, BF16 combine. Bytes per rank rebuilt from DeepSeek-V3's config and the FP8 recipe
# (one FP32 scale per 128 activations, arXiv:2412.19437 §3.3).

# %%
from qbank.verify import check, claim, fact, given

d = fact("deepseek_v3.hidden_size", "d_model")
k = fact("deepseek_v3.num_experts_per_tok", "top_k")
L = fact("deepseek_v3.num_hidden_layers", "layers")
dense = fact("deepseek_v3.first_k_dense_replace", "dense_layers")
nic = fact("networking.nic_per_gpu_connectx7", "nic_gbit")
tokens = given("tokens_per_rank", 128, unit="tokens", source="DeepEP docs/legacy.md: '128 tokens per batch' (per rank)")
tile = given("scale_tile", 128, unit="elements", source="arXiv:2412.19437 §3.3: activations scaled per 1x128 tile")
scale_b = given("scale_bytes", 4, unit="B", source="FP32 scaling factors (arXiv:2412.19437 §3.3)")
fp8 = given("fp8_bytes", 1, unit="B", source="FP8 E4M3: 1 byte per element")
bf16 = given("bf16_bytes", 2, unit="B", source="BF16: 2 bytes per element")
SRC = "DeepEP docs/legacy.md @0297fc80, low-latency table"
eps = (8, 16, 32, 64, 128, 256)
disp_us = dict(zip(eps, (77, 118, 155, 173, 192, 194), strict=True))
comb_us = dict(zip(eps, (114, 195, 273, 314, 369, 360), strict=True))
disp_gbs = dict(zip(eps, (98, 63, 48, 43, 39, 39), strict=True))
comb_gbs = dict(zip(eps, (127, 74, 53, 46, 39, 40), strict=True))
for ep in eps:
    given(f"ep{ep}", ep, unit="GPUs", source=SRC + ": EP degree")
    given(f"dispatch_us_ep{ep}", disp_us[ep] * 1e-6, unit="s", source=SRC + ": dispatch latency")
    given(f"combine_us_ep{ep}", comb_us[ep] * 1e-6, unit="s", source=SRC + ": combine latency")

# %% [markdown]
# ## Bytes each rank sends: 128 tokens x 8 copies

# %%
disp_copy = claim("dispatch_bytes_per_copy", d * fp8 + d / tile * scale_b, unit="B")
comb_copy = claim("combine_bytes_per_copy", d * bf16, unit="B")
disp_rank = claim("dispatch_bytes_per_rank", tokens * k * disp_copy, unit="B")
comb_rank = claim("combine_bytes_per_rank", tokens * k * comb_copy, unit="B")
dev = []
for ep in eps:
    bw_d = disp_rank / (disp_us[ep] * 1e-6) / 1e9
    bw_c = comb_rank / (comb_us[ep] * 1e-6) / 1e9
    dev += [abs(bw_d / disp_gbs[ep] - 1), abs(bw_c / comb_gbs[ep] - 1)]
    check(abs(bw_d / disp_gbs[ep] - 1) < 0.03, f"EP{ep}: bytes / latency reproduces the dispatch bandwidth column")
    check(abs(bw_c / comb_gbs[ep] - 1) < 0.03, f"EP{ep}: bytes / latency reproduces the combine bandwidth column")
claim("max_bw_deviation", max(dev), unit="fraction")
claim("peer_ratio_64_to_256", 256 / 64, unit="x")
claim("implied_dispatch_bw_ep256", disp_rank / (disp_us[256] * 1e-6), unit="B/s")
claim("implied_dispatch_bw_ep8", disp_rank / (disp_us[8] * 1e-6), unit="B/s")

# %% [markdown]
# ## The NIC floor: time to push those bytes through one 400 Gb/s port

# %%
nic_bps = claim("nic_bytes_per_s", nic * 1e9 / 8, unit="B/s")
floor_d = claim("dispatch_floor", disp_rank / nic_bps, unit="s")
floor_c = claim("combine_floor", comb_rank / nic_bps, unit="s")
claim("dispatch_line_share_ep256", floor_d / (disp_us[256] * 1e-6), unit="fraction")
claim("combine_line_share_ep256", floor_c / (comb_us[256] * 1e-6), unit="fraction")
claim("ep8_over_nic", disp_rank / (disp_us[8] * 1e-6) / nic_bps, unit="x")
check(disp_rank / (disp_us[8] * 1e-6) > nic_bps, "the EP8 row moves more than one NIC could carry")
# The other path is NVLink: the README that first carried this table announced beside it (2025-06-05) "low-latency
# kernels now leverage NVLink as much as possible" (PR #173). The same row before that commit, over pure RDMA:
rdma_ep8 = given(
    "dispatch_us_ep8_pure_rdma",
    163e-6,
    unit="s",
    source="github:deepseek-ai/DeepEP README.md @3b1045db43ed232691d32dde0517dfed571b0a65 low-latency table, EP8 "
    "dispatch 163 us, 46 GB/s (replaced by 77 us in de8cfca3 'Update readme.', which added the PR #173 NVLink note)",
)
given("gpus_per_node", 8, unit="GPUs", source="DeepEP docs/legacy.md test setup: H800 nodes of 8 GPUs (EP8 = one node)")
claim("implied_dispatch_bw_ep8_pure_rdma", disp_rank / rdma_ep8, unit="B/s")
line_share_rdma = claim("dispatch_line_share_ep8_pure_rdma", disp_rank / rdma_ep8 / nic_bps, unit="fraction")
check(0.8 < line_share_rdma < 1, "over pure RDMA the EP8 row sat just under one port's line rate")
claim("dispatch_growth_64_to_256", disp_us[256] / disp_us[64], unit="x")
claim("dispatch_growth_8_to_64", disp_us[64] / disp_us[8], unit="x")

# %% [markdown]
# ## Per decode step of DeepSeek-V3: 58 MoE layers, each a dispatch and a combine

# %%
moe = claim("moe_layers", L - dense, unit="layers")
step_256 = claim("comm_per_step_ep256", moe * (disp_us[256] + comb_us[256]) * 1e-6, unit="s")
step_64 = claim("comm_per_step_ep64", moe * (disp_us[64] + comb_us[64]) * 1e-6, unit="s")
step_8 = claim("comm_per_step_ep8", moe * (disp_us[8] + comb_us[8]) * 1e-6, unit="s")
claim("comm_bound_tokens_per_s_ep256", tokens / step_256, unit="tokens/s")
comb_share = claim("combine_share_ep256", comb_us[256] / (disp_us[256] + comb_us[256]), unit="fraction")
floor_step = claim("nic_floor_per_step", moe * (floor_d + floor_c), unit="s")

# %% [markdown]
# ## Sensitivity: an FP8 combine (a hypothetical, not DeepEP's measured configuration)
# If combine were bandwidth-bound at the EP256 rate it achieves now, sending FP8 with the same scales would scale its
# time by the byte ratio. Fixed per-call overheads are not in the table, so this is an upper bound on the saving.

# %%
ratio = claim("fp8_combine_byte_ratio", disp_copy / comb_copy, unit="x")
comb_fp8 = comb_us[256] * 1e-6 * ratio
claim("comm_per_step_ep256_fp8_combine", moe * (disp_us[256] * 1e-6 + comb_fp8), unit="s")
print(disp_rank, comb_rank, floor_d * 1e6, floor_c * 1e6, step_256 * 1e3, step_64 * 1e3, step_8 * 1e3, comb_share)
