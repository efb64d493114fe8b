# %% [markdown]
# # The KV hand-off: where the blocks wait, what they cost, and the wire they take
# vLLM's NixlConnector: the decode instance reads the prompt's KV from the prefill instance; the prefill
# instance holds the blocks until the read, under a lease (kv_lease_duration, default 30 s) that
# heartbeats extend while the request is queued on the decoder (github:vllm-project/vllm
# docs/features/nixl_connector_usage.md @026c83f9). Llama-3.1-70B (bf16) at TP8 on H100 nodes; the
# prefill node runs at the rate its TTFT target allows (prefill-decode-ratio-from-slos, 4,096-token
# prompts). Transport per GPU: a 400 Gb/s ConnectX-7 NIC, or NVLink 5 inside a GB200 NVL72 rack.

# %%
from qbank.verify import check, claim, fact, given

params = given("params_70b", 70.55e9, unit="params", source="Llama-3.1-70B count from its config (recompute-vs-fetch script)")
kv_tok = fact("derived.kv_bytes_per_token_llama31_70b_bf16", "kv_bytes_per_token")
layers = fact("llama3_1_70b.num_hidden_layers", "layers")
kv_heads = fact("llama3_1_70b.num_key_value_heads", "kv_heads")
head_dim = fact("llama3_1_70b.head_dim", "head_dim")
bf16 = given("bf16_bytes", 2, unit="B", source="bf16 stores 2 bytes per value")
tp = given("tp_gpus", 8, unit="GPUs", source="example: one instance = one 8-GPU node at TP8")
block = fact("vllm.block_size_default", "block_size")
total_mem = fact("h100_sxm.cuda_total_memory", "cuda_total_memory")
util = fact("vllm.gpu_memory_utilization_default", "gpu_memory_utilization")
reserve = given("runtime_reserve", 3e9, unit="B", source="the question's hypothetical: runtime memory per GPU")
lease = given("kv_lease_duration", 30, unit="s",
              source="github:vllm-project/vllm docs/features/nixl_connector_usage.md @026c83f9: kv_lease_duration default 30")
prompt = given("prompt_tokens", 4096, unit="tokens", source="the question's hypothetical prompt length")
lam_p = given("prefill_node_rate", 6.67, unit="requests",
              source="prefill-decode-ratio-from-slos: one prefill node's rate at P90 TTFT 1 s for 4,096-token prompts")
lam = given("arrival_rate", 20, unit="requests", source="the question's hypothetical load, requests per second")
mu_dec = given("decode_capacity", 18, unit="requests",
               source="the question's hypothetical: decode pool capacity 10% short of the load, requests per second")

pool_tok = claim("prefill_pool_tokens", tp * (total_mem * util - reserve - params * bf16 / tp) / kv_tok, unit="tokens")
inflow = claim("held_inflow_tokens_per_s", lam_p * prompt, unit="tokens/s")
claim("seconds_of_unread_to_fill", pool_tok / inflow, unit="s")
claim("held_share_at_lease", inflow * lease / pool_tok, unit="fraction")
claim("requests_to_fill", pool_tok / prompt, unit="requests")

# %% [markdown]
# ## A decode pool 10% short: how long until prefill stalls
# The decode backlog grows at (arrivals - decode capacity); every request in it holds its prompt's KV on
# a prefill node (spread over the prefill pool of lam / lam_p nodes).

# %%
claim("decode_shortfall", 1 - mu_dec / lam, unit="fraction")
growth = claim("backlog_growth", lam - mu_dec, unit="requests")
p_nodes = claim("prefill_nodes", lam / lam_p, unit="nodes")
t_fill = claim("seconds_to_prefill_stall", pool_tok * p_nodes / prompt / growth, unit="s")
claim("decode_wait_at_stall_s", pool_tok * p_nodes / prompt / mu_dec, unit="s")
check(t_fill > lease, "the prefill pool fills long after a lease would have expired")

# %% [markdown]
# ## The transfer itself, per GPU
# Per rank: 1 KV head of 128 dims; a 16-token block of one layer holds K and V.

# %%
nic = fact("networking.nic_per_gpu_connectx7", "nic", unit="Gbit/s")
nvl = fact("gb200_nvl72.nvlink_bw_per_gpu", "nvlink_bidir", unit="TB/s")
nic_bps = claim("nic_bytes_per_s", nic * 1e9 / 8, unit="B/s")
nvl_bps = claim("nvlink_bytes_per_s_per_direction", nvl * 1e12 / 2, unit="B/s")
per_rank = claim("kv_bytes_per_rank", prompt * kv_tok / tp, unit="B")
t_nic = claim("transfer_ms_nic", per_rank / nic_bps * 1e3, unit="ms")
t_nvl = claim("transfer_ms_nvlink", per_rank / nvl_bps * 1e3, unit="ms")
claim("nvlink_over_nic", t_nic / t_nvl, unit="x")
blocks = claim("blocks_per_prompt", prompt / block, unit="blocks")
# NixlConnector registers K and V as separate regions unless the backend is MLA, Pallas or FlashInfer
# (github:vllm-project/vllm nixl_connector.py register_kv_caches: 'split_k_and_v = not (self.use_mla or
# self._use_pallas or self._use_flashinfer)'): on FlashAttention, the H100 default for Llama, a block of
# one layer is two regions, K and V; on FlashInfer one region holding both.
block_kv = block * (kv_heads / tp) * head_dim * 2 * bf16  # K and V of one block, one layer, one rank
region = claim("region_bytes", block_kv / 2, unit="B")
claim("region_bytes_flashinfer", block_kv, unit="B")
regions = claim("regions_per_rank", blocks * layers * 2, unit="blocks")
claim("regions_per_rank_flashinfer", blocks * layers, unit="blocks")
claim("regions_cross_layer", blocks, unit="blocks")
claim("ops_reduction", regions / blocks, unit="x")
given("prefill_service_s", 0.1264, unit="s", source="prefill-decode-ratio-from-slos: a 4,096-token prompt's prefill at TP8")
claim("cross_layer_region_bytes", block_kv * layers, unit="B")
claim("region_wire_us_nic", region / nic_bps * 1e6, unit="us")
claim("region_wire_us_nvlink", region / nvl_bps * 1e6, unit="us")
check(abs(regions * region - per_rank) < 1, "the regions add up to the rank's KV")
