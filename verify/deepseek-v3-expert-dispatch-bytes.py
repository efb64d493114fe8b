# %% [markdown]
# # DeepSeek-V3 dispatch and combine bytes per token
# Config from the fact base (official `config_671B.json`). Communication recipe from the DeepSeek-V3
# paper (arXiv:2412.19437 §3.3): activations are quantized to FP8 with one scale per 1×128 tile before
# dispatch; combine stays in BF16. Layout (an example): 256 routed experts on 64 GPUs in 8 HGX nodes,
# 32 experts per node, so the router's 8 expert groups map to nodes and "top-4 groups" means at most 4
# nodes per token. Routing is taken as uniform over groups and experts. The seed's count checks out: 58
# MoE layers, dispatch + combine = 116 all-to-alls per step (59 MoE layers if the MTP module drafts).

# %%
from qbank.verify import check, claim, fact, given

L = fact("deepseek_v3.num_hidden_layers", "layers")
dense = fact("deepseek_v3.first_k_dense_replace", "dense_layers")
E = fact("deepseek_v3.n_routed_experts", "routed_experts")
k = fact("deepseek_v3.num_experts_per_tok", "top_k")
d = fact("deepseek_v3.hidden_size", "d_model")
nic = fact("networking.nic_per_gpu_connectx7", "nic_gbit")
nvlink = fact("h100_sxm.nvlink_bw_per_gpu", "nvlink_bidir")
groups = given("n_group", 8, source="DeepSeek-V3 config n_group=8 (facts: deepseek_v3.num_experts_per_tok note)")
topk_groups = given("topk_group", 4, unit="nodes", source="DeepSeek-V3 config topk_group=4; paper §2.1.2 "
    "node-limited routing, M=4")
nodes = given("nodes", 8, unit="nodes", source="example layout: one node per expert group")
gpus_per_node = fact("h100_sxm.nvlink_domain", "gpus_per_node")
tile = given("scale_tile", 128, unit="elements", source="arXiv:2412.19437 §3.3.2: activations scaled per 1x128 tile")
scale_bytes = given("scale_bytes", 4, unit="B", source="FP32 scaling factors (arXiv:2412.19437 §3.3)")
fp8_b = given("fp8_bytes", 1, unit="B", source="FP8 E4M3: 1 byte per element")
bf16_b = given("bf16_bytes", 2, unit="B", source="BF16: 2 bytes per element")
tokens_per_gpu = given("tokens_per_gpu", 128, unit="tokens", source="example decode batch per GPU per step")

# %%
ep_gpus = claim("ep_gpus", nodes * gpus_per_node, unit="GPUs")
experts_per_gpu = claim("experts_per_gpu", E / ep_gpus, unit="experts")
moe = claim("moe_layers", L - dense, unit="layers")
a2a = claim("all_to_alls_per_step", 2 * moe)  # dispatch + combine
mtp = fact("deepseek_v3_mtp.mtp_depth", "mtp_depth")
moe_mtp = claim("moe_layers_with_mtp", moe + mtp, unit="layers")
passes = given("collectives_per_moe_layer", 2, source="dispatch + combine per MoE layer (DeepEP: 'MoE dispatch "
    "and combine')")
check(moe == 58 and a2a == 116, "58 MoE layers, 116 all-to-alls per step: the seed's count holds")
disp = claim("dispatch_bytes_per_copy", d * fp8_b + d / tile * scale_bytes, unit="B")
comb = claim("combine_bytes_per_copy", d * bf16_b, unit="B")
comb_ratio = claim("combine_over_dispatch", comb / disp, unit="x")
rt = claim("round_trip_bytes_per_copy", disp + comb, unit="B")
per_layer = claim("bytes_per_token_layer", k * rt, unit="B")
per_step = claim("bytes_per_token_step", per_layer * moe, unit="B")
scale_share = claim("scale_overhead", d / tile * scale_bytes / (d * fp8_b), unit="fraction")

# %% [markdown]
# ## Split between NIC and NVLink
# P(own node among the 4 chosen) = 4/8; given chosen, it holds 8/4 = 2 of the token's experts on average.
# Naive dispatch sends each expert copy straight to its GPU: the copies to other nodes cross the NIC.
# Node-aware dispatch (DeepEP normal kernels) sends one copy per destination node over RDMA and fans out
# over NVLink inside that node; combine reduces inside the node first and sends one result back.

# %%
p_local_node = claim("p_own_node_chosen", topk_groups / groups, unit="fraction")
per_chosen_node = claim("experts_per_chosen_node", k / topk_groups, unit="experts")
local_copies = claim("local_node_copies", p_local_node * k / topk_groups, unit="experts")
naive_nic_copies = claim("naive_nic_copies", k - local_copies, unit="experts")
aware_nic_copies = claim("aware_nic_copies", topk_groups - p_local_node, unit="nodes")
naive_nic = claim("naive_nic_bytes_step", naive_nic_copies * rt * moe, unit="B")
aware_nic = claim("aware_nic_bytes_step", aware_nic_copies * rt * moe, unit="B")
naive_nvl = claim("naive_nvlink_bytes_step", local_copies * rt * moe, unit="B")
saving = claim("nic_saving", 1 - aware_nic / naive_nic, unit="fraction")
check(abs(naive_nic_copies - 7) < 1e-12 and abs(aware_nic_copies - 3.5) < 1e-12, "7 NIC copies naive, 3.5 node-aware")

# %% [markdown]
# ## Time per step at 128 tokens per GPU (each direction carries the same load in steady state)

# %%
nic_bps = nic * 1e9 / 8
nvl_bps = nvlink * 1e9 / 2
nic_gbs = claim("nic_per_direction", nic_bps, unit="B/s")
nvl_gbs = claim("nvlink_per_direction", nvl_bps, unit="B/s")
t_naive = claim("nic_time_naive", tokens_per_gpu * naive_nic / nic_bps, unit="s")
t_aware = claim("nic_time_aware", tokens_per_gpu * aware_nic / nic_bps, unit="s")
t_nvl = claim("nvlink_time_fanout", tokens_per_gpu * per_step / nvl_bps, unit="s")
t_layer = claim("nic_time_aware_per_layer", t_aware / moe, unit="s")
bw_ratio = claim("nvlink_over_nic", nvl_bps / nic_bps, unit="x")
print(disp, comb, rt, per_layer, per_step / 1e6, naive_nic / 1e6, aware_nic / 1e6, naive_nvl / 1e6)
print(t_naive * 1e3, t_aware * 1e3, t_nvl * 1e3, t_layer * 1e6, bw_ratio, scale_share)

# %% [markdown]
# ## Hiding it: dual-batch overlap

# %%
given(
    "micro_batches",
    2,
    source="DeepSeek open-infra-index, 'Day 6: DeepSeek-V3/R1 Inference System Overview': each batch is split into "
    "two microbatches that alternate, one computing while the other communicates",
)
