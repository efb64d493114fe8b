# %% [markdown]
# # What a 72-GPU NVLink domain moves inside the rack
# GPU and network figures from the fact base: HGX B200 (8-GPU NVLink domain, 1.8 TB/s NVLink per GPU,
# 400 Gb/s ConnectX-7 per GPU as in DGX B200) and GB200 NVL72 (72 GPUs, 186 GB and 1.8 TB/s NVLink per GPU).
# The fact base marks the NVL72's per-GPU NIC speed unconfirmed; cross-rack traffic here assumes the same
# 400 Gb/s per GPU as HGX B200 and the answer says so. Model inputs: DeepSeek-V3 config and its MLA cache
# size; Llama-3.1-70B's GQA cache as the contrast. Dispatch bytes follow the DeepSeek-V3 recipe (FP8 with
# 1x128-tile FP32 scales out, BF16 back; arXiv:2412.19437 §3.3).

# %%
import math

from qbank.verify import check, claim, fact, given

dom8 = fact("b200_hgx.nvlink_domain", "hgx_domain")
dom72 = fact("gb200_nvl72.nvlink_domain", "nvl72_domain")
nvl = fact("gb200_nvl72.nvlink_bw_per_gpu", "nvlink_bidir")
nic = fact("networking.nic_per_gpu_connectx7", "nic_gbit")
hbm72 = fact("gb200_nvl72.hbm_capacity_per_gpu", "nvl72_hbm")
L = fact("deepseek_v3.num_hidden_layers", "layers")
dense = fact("deepseek_v3.first_k_dense_replace", "dense_layers")
E = fact("deepseek_v3.n_routed_experts", "routed_experts")
k = fact("deepseek_v3.num_experts_per_tok", "top_k")
d = fact("deepseek_v3.hidden_size", "d_model")
total = fact("deepseek_v3.total_params", "total_params")
mla_tok = fact("derived.kv_bytes_per_token_deepseek_v3_mla_bf16", "mla_bytes_per_token")
gqa_tok = fact("derived.kv_bytes_per_token_llama31_70b_bf16", "gqa_bytes_per_token")
tokens_gpu = given("tokens_per_gpu", 128, unit="tokens", source="example decode batch per GPU per step")
prompt = given("prompt_tokens", 8192, unit="tokens", source="example prompt handed from prefill to decode")
slots = given("slots_per_gpu", 4, unit="slots", source="example: 4 expert slots per GPU")

# %%
dom_ratio = claim("domain_ratio", dom72 / dom8, unit="x")
nvl_dir = claim("nvlink_per_direction", nvl * 1e12 / 2, unit="B/s")
nic_dir = claim("nic_per_direction", nic * 1e9 / 8, unit="B/s")
bw_ratio = claim("nvlink_over_nic", nvl_dir / nic_dir, unit="x")
rack_hbm = claim("rack_hbm", dom72 * hbm72 * 1e9, unit="B")
w_fp8 = claim("weights_fp8", total, unit="B")
w_share = claim("weights_share_of_rack", w_fp8 / rack_hbm, unit="fraction")
kv_tokens_rack = claim("rack_kv_tokens", (rack_hbm - w_fp8) / mla_tok, unit="tokens")

# %% [markdown]
# ## Expert parallelism over the whole rack
# 256 experts do not divide by 72; 4 slots per GPU give 288 slots, 32 of them redundant copies of hot experts.

# %%
total_slots = claim("expert_slots", dom72 * slots, unit="slots")
redundant = claim("redundant_slots", total_slots - E, unit="slots")
check(redundant == 32, "32 redundant expert slots")
moe = claim("moe_layers", L - dense, unit="layers")
per_tok = claim("a2a_bytes_per_token", k * (d * 1 + d / 128 * 4 + d * 2) * moe, unit="B")
remote_share = claim("remote_share_nvl72", (dom72 - 1) / dom72, unit="fraction")
t_nvl72 = claim("a2a_time_nvl72", tokens_gpu * per_tok * remote_share / nvl_dir, unit="s")
# HGX B200, EP over 8 nodes with node-aware dispatch: 3.5 NIC copies per token-layer (see the dispatch question)
hgx_nodes = given("hgx_nodes", 8, unit="nodes", source="example HGX layout: EP over 8 nodes (64 GPUs)")
aware = given("nic_copies_node_aware", 3.5, unit="nodes", source="node-aware dispatch over 8 nodes with top-4 "
    "node routing: 4 - 0.5 remote nodes per token-layer (derived in deepseek-v3-expert-dispatch-bytes)")
t_hgx = claim("a2a_time_hgx_nic", tokens_gpu * per_tok * aware / k / nic_dir, unit="s")
speedup = claim("a2a_speedup", t_hgx / t_nvl72, unit="x")

# %% [markdown]
# ## Prefill-to-decode KV handoff of an 8,192-token prompt

# %%
mla_req = claim("mla_kv_request", mla_tok * prompt, unit="B")
gqa_req = claim("gqa_kv_request", gqa_tok * prompt, unit="B")
t_mla_nvl = claim("mla_handoff_nvlink", mla_req / nvl_dir, unit="s")
t_mla_nic = claim("mla_handoff_nic", mla_req / nic_dir, unit="s")
t_gqa_nvl = claim("gqa_handoff_nvlink", gqa_req / nvl_dir, unit="s")
t_gqa_nic = claim("gqa_handoff_nic", gqa_req / nic_dir, unit="s")

# %% [markdown]
# ## Blast radius of one failed GPU
# An instance spanning the NVLink domain stops when any member stops (EP has no spare rank by default).

# %%
blast8 = claim("blast_radius_hgx", dom8, unit="GPUs")
blast72 = claim("blast_radius_nvl72", dom72, unit="GPUs")
half_rack = claim("half_rack_instance", dom72 / 2, unit="GPUs")
inst_per_rack = claim("instances_per_rack", dom72 / half_rack, unit="instances")
slots_half = claim("slots_per_gpu_half_rack", math.ceil(E / half_rack), unit="slots")
half_slots = claim("half_rack_slots", half_rack * math.ceil(E / half_rack), unit="slots")
check(half_slots >= E, "a 36-GPU instance still fits all 256 experts with 8 slots per GPU")
print(bw_ratio, rack_hbm / 1e9, w_share, kv_tokens_rack / 1e6, per_tok / 1e6)
print(t_nvl72 * 1e3, t_hgx * 1e3, speedup)
print(mla_req / 1e6, gqa_req / 1e9, t_mla_nvl * 1e3, t_mla_nic * 1e3, t_gqa_nvl * 1e3, t_gqa_nic * 1e3, half_slots)
