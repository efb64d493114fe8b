# %% [markdown]
# # DeepSeek-V3's shared expert at decode: replicate it everywhere, or route it like a hot expert?
# Config from the fact base (config_671B.json). Decode layout from the DeepSeek-V3 paper, arXiv:2412.19437 §3.4.2:
# EP320, one expert per GPU, the shared expert treated as a routed target every token selects (9 per token), 64 GPUs
# holding redundant and shared experts, decode batch per expert "usually within 256 tokens". Dispatch bytes as in
# §3.3 (FP8 with one FP32 scale per 128 activations), combine in BF16. H100 SXM bandwidth and 400 Gb/s NIC per GPU.

# %%
from qbank.verify import check, claim, fact, given

L = fact("deepseek_v3.num_hidden_layers", "layers")
dense = fact("deepseek_v3.first_k_dense_replace", "dense_layers")
E = fact("deepseek_v3.n_routed_experts", "routed_experts")
shared = fact("deepseek_v3.n_shared_experts", "shared_experts")
k = fact("deepseek_v3.num_experts_per_tok", "top_k")
d = fact("deepseek_v3.hidden_size", "d_model")
f = fact("deepseek_v3.moe_intermediate_size", "expert_ffn")
bw = fact("h100_sxm.hbm_bandwidth", "hbm_bw")
nic = fact("networking.nic_per_gpu_connectx7", "nic_gbit")
SRC = "DeepSeek-V3 arXiv:2412.19437 §3.4.2 (decoding deployment)"
ep = given("ep_gpus", 320, unit="GPUs", source=SRC + ": EP320, 40 nodes")
spare = given("spare_gpus", 64, unit="GPUs", source=SRC + ": 64 GPUs host redundant and shared experts")
per_expert_batch = given(
    "tokens_per_expert", 256, unit="tokens", source=SRC + ": batch per expert 'usually within 256 tokens' (upper end)"
)
fp8 = given("fp8_bytes", 1, unit="B", source="FP8 E4M3 weights and dispatch: 1 byte per element")
bf16 = given("bf16_bytes", 2, unit="B", source="BF16 combine: 2 bytes per element")
tile = given("scale_tile", 128, unit="elements", source="arXiv:2412.19437 §3.3: one scale per 1x128 activation tile")
scale_b = given("scale_bytes", 4, unit="B", source="FP32 scaling factors (arXiv:2412.19437 §3.3)")

# %% [markdown]
# ## One expert, in bytes

# %%
moe = claim("moe_layers", L - dense, unit="layers")
mats = given("expert_matrices", 3, source="SwiGLU expert: gate, up and down projections")
expert_bytes = claim("expert_bytes_fp8", mats * d * f * fp8, unit="B")
shared_all_layers = claim("shared_bytes_all_layers", shared * moe * expert_bytes, unit="B")
check(ep - spare == E, "256 GPUs for the routed experts, 64 spare")

# %% [markdown]
# ## How many copies the shared expert needs to match a routed expert's load
# Every token selects the shared expert; a routed expert sees k/E of the tokens (uniform). To give each shared copy
# the load of a routed expert takes E/k copies.

# %%
claim("routed_share", k / E, unit="fraction")
load_ratio = claim("shared_over_routed_load", E / k, unit="x")
copies = claim("shared_copies_balanced", E / k, unit="GPUs")
claim("redundant_gpus_left", spare - copies, unit="GPUs")
slots = claim("experts_per_token_with_shared", k + shared, unit="experts")

# %% [markdown]
# ## Option A: a shared replica on every GPU. Option B: shared as a routed target on its own GPUs
# Per GPU, per MoE layer, at the paper's 256 tokens per expert. Tokens originated per GPU: the cluster's tokens spread
# over all EP ranks; the cluster's tokens = 256 x 320 / 9 under option B's 9 selections per token.

# %%
tokens_total = claim("cluster_tokens", per_expert_batch * ep / slots, unit="tokens")
t_orig = claim("tokens_per_gpu", tokens_total / ep, unit="tokens")
extra_read_a = claim("option_a_extra_read_time", expert_bytes / (bw * 1e12), unit="s")
mem_a = claim("option_a_extra_memory", shared_all_layers, unit="B")
copy_bytes = d * fp8 + d / tile * scale_b + d * bf16
claim("round_trip_bytes_per_copy", copy_bytes, unit="B")
extra_nic_b = claim("option_b_extra_nic_bytes", t_orig * copy_bytes, unit="B")
extra_nic_time_b = claim("option_b_extra_nic_time", t_orig * copy_bytes / (nic * 1e9 / 8), unit="s")
claim("option_b_extra_comm_share", shared / k, unit="fraction")
routed_per_gpu = claim("routed_per_gpu", E / (ep - spare), unit="experts")
claim("option_a_weight_read_factor", (routed_per_gpu + shared) / routed_per_gpu, unit="x")
check(0.5 < extra_nic_time_b / extra_read_a < 2, "the time costs are within 2x of each other: memory decides")
claim("option_a_step_extra_read", moe * extra_read_a, unit="s")
claim("option_b_step_extra_nic", moe * extra_nic_time_b, unit="s")

# %% [markdown]
# ## The smaller layout: EP64, where each GPU already holds 4 routed experts per layer

# %%
ep_small = given("ep_small", 64, unit="GPUs", source="comparison layout: 8 nodes of 8 GPUs")
routed_mem_small = claim("routed_bytes_per_gpu_ep64", E / ep_small * moe * expert_bytes, unit="B")
claim("shared_share_ep64", shared_all_layers / routed_mem_small, unit="fraction")
claim("routed_experts_per_gpu_ep64", E / ep_small, unit="experts")

# %% [markdown]
# ## Hiding the shared expert behind dispatch
# The shared expert does not depend on routing, so on a replica it can run while the dispatch is in flight.
# DeepEP's measured low-latency dispatch at EP64 is 173 us (docs/legacy.md @0297fc80).

# %%
disp = given(
    "dispatch_latency_ep64", 173e-6, unit="s", source="DeepEP docs/legacy.md @0297fc80 low-latency table, EP64"
)
claim("shared_read_over_dispatch", extra_read_a / disp, unit="fraction")
print(expert_bytes, shared_all_layers, tokens_total, t_orig, extra_read_a * 1e6, extra_nic_b, extra_nic_time_b * 1e6)
