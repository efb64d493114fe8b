# %% [markdown]
# # Tensor parallelism past the KV-head count: Llama-3.1-405B on 16 H100s
# Inputs: Llama-3.1-405B's config (8 KV heads, 126 layers; `sku_list.py` via the facts file; early HF copies
# showing 16 KV heads are wrong), H100 SXM 80 GB, vLLM v0.21+ default gpu_memory_utilization 0.92, which vLLM
# multiplies by the total cudaMemGetInfo reports (79.18 GiB = 85.02 GB on an H100 80GB, not 80e9 B;
# vllm/v1/worker/gpu_worker.py determine_available_memory).
# With TP above the KV-head count, vLLM gives each rank max(1, kv_heads / tp) KV heads, replicating them,
# and with them the K and V projection weights that produce those heads (vllm/model_executor/layers/linear.py
# @8c94938c QKVParallelLinear.__init__: num_kv_heads = 1, num_kv_head_replicas = tp_size / total_num_kv_heads
# when tp_size >= total_num_kv_heads).

# %%
from qbank.verify import check, claim, fact, given

layers = fact("llama3_1_405b.num_hidden_layers", "layers")
hidden = fact("llama3_1_405b.hidden_size", "hidden")
q_heads = fact("llama3_1_405b.num_attention_heads", "q_heads")
kv_heads = fact("llama3_1_405b.num_key_value_heads", "kv_heads")
head_dim = fact("llama3_1_405b.head_dim", "head_dim")
inter = fact("llama3_1_405b.intermediate_size", "intermediate")
vocab = fact("llama3_1_405b.vocab_size", "vocab")
hbm = fact("h100_sxm.hbm_capacity", "hbm_gb")
cuda_total = fact("h100_sxm.cuda_total_memory", "cuda_total_bytes")
node = fact("h100_sxm.nvlink_domain", "gpus_per_node")
util = fact("vllm.gpu_memory_utilization_default", "util")
nvlink = fact("h100_sxm.nvlink_bw_per_gpu", "nvlink_gbs")
nic = fact("networking.nic_per_gpu_connectx7", "nic_gbit")
bf16 = given("bf16_bytes", 2, unit="B", source="bf16 is 2 bytes")
gpus = given("gpus", 16, unit="GPUs", source="two 8-GPU H100 nodes: 810 GB of BF16 weights exceed one node's 640 GB")

# %%
per_layer = hidden * q_heads * head_dim * 2 + 2 * hidden * kv_heads * head_dim + 3 * hidden * inter + 2 * hidden
params = claim("params", 2 * vocab * hidden + layers * per_layer + hidden, unit="params")
check(abs(params / 1e9 - 405.85) < 0.01, "405.85B parameters from the config")
weights = claim("weights_bytes", params * bf16, unit="B")
check(weights > node * hbm * 1e9, "BF16 weights do not fit one 8-GPU node")
w_gpu = claim("weights_per_gpu", weights / gpus, unit="B")  # an even 16-way split: TP8 x PP2
# At TP16 the K and V projections cannot split 16 ways either: each rank holds the full K/V projection of its
# one KV head, so those weights are split 8 ways, not 16, and every one of them is stored twice.
kv_proj = claim("kv_proj_params", layers * 2 * hidden * kv_heads * head_dim, unit="params")
w_gpu_tp16 = claim("weights_per_gpu_tp16", (params - kv_proj) * bf16 / gpus + kv_proj * bf16 / node, unit="B")
kv_proj_dup = claim("kv_proj_duplicate_per_gpu", w_gpu_tp16 - w_gpu, unit="B")
check(w_gpu_tp16 > w_gpu, "replicated K/V projections make TP16's weights per GPU more than an even 1/16")

# %% [markdown]
# ## KV per token per GPU under three layouts

# %%
kv_layer_head = 2 * head_dim * bf16  # K and V, one head, one layer
kv_model = claim("kv_per_token_model", layers * kv_heads * kv_layer_head, unit="B")
check(kv_model == 504 * 1024, "504 KiB per token for the model")
tp8 = given("tp8", 8, unit="GPUs", source="tensor parallel degree equal to the KV-head count")
kv_tp8 = layers * max(1, kv_heads / tp8) * kv_layer_head  # B per token per GPU at TP8 (not stated)
kv_tp16 = claim("kv_per_gpu_tp16", layers * max(1, kv_heads / gpus) * kv_layer_head, unit="B")
check(kv_tp16 == kv_tp8, "TP16 leaves per-GPU KV where TP8 had it")
replication = claim("kv_replication_tp16", kv_tp16 * gpus / kv_model, unit="x")
check(replication == 2, "the cluster stores every KV head twice")
pp = given("pp", 2, unit="GPUs", source="pipeline stages in the TP8 x PP2 layout")
kv_tp8pp2 = claim("kv_per_gpu_tp8_pp2", layers / pp * max(1, kv_heads / tp8) * kv_layer_head, unit="B")
check(kv_tp8pp2 * 2 == kv_tp16, "TP8 x PP2 halves per-GPU KV")
dup_bytes_gpu = claim("duplicate_kv_per_gpu_per_token", kv_tp16 - kv_tp8pp2, unit="B")

# %% [markdown]
# ## Token capacity per GPU (TP16 carries the replicated K/V projections; TP8 x PP2 splits evenly)

# %%
requested = claim("requested_per_gpu", cuda_total * util, unit="B")
act_peak = given("activation_peak", 2.5e9, unit="B", source="example figure per GPU, the same as in the "
                 "max-concurrent-requests-memory-budget answer; vLLM measures it in a dummy run at startup")
non_torch = given("non_torch", 1.0e9, unit="B", source="example figure per GPU (CUDA context, NCCL), the same as in "
                  "the max-concurrent-requests-memory-budget answer; vLLM measures it from cudaMemGetInfo")
graphs = given("cudagraph_estimate", 0.5e9, unit="B", source="example figure per GPU, the same as in the "
               "max-concurrent-requests-memory-budget answer; estimated by a dummy capture since v0.21")
overheads = claim("runtime_overheads_per_gpu", act_peak + non_torch + graphs, unit="B")
budget = claim("kv_budget_per_gpu", requested - w_gpu - overheads, unit="B")
budget_tp16 = claim("kv_budget_per_gpu_tp16", requested - w_gpu_tp16 - overheads, unit="B")
tok_tp16 = claim("tokens_tp16", budget_tp16 / kv_tp16, unit="tokens")
tok_tp8pp2 = claim("tokens_tp8_pp2", budget / kv_tp8pp2, unit="tokens")
# Llama 3.1 SKUs share the 131,072-token context (sku_list CONTEXT_LENGTH); the facts file keys it under the 8B.
req_ctx = fact("llama3_1_8b.max_position_embeddings", "context")
req_tp16 = claim("full_context_requests_tp16", tok_tp16 / req_ctx, unit="requests")
req_tp8pp2 = claim("full_context_requests_tp8pp2", tok_tp8pp2 / req_ctx, unit="requests")

# A config copy that declares 16 KV heads hides the duplicate: TP16 then looks as good as TP8 x PP2.
wrong_kv = given(
    "kv_heads_wrong_config",
    16,
    unit="heads",
    source="litgpt config.py listed n_query_groups=16 for Llama-3.1-405B (Lightning-AI/litgpt issue #1942); "
    "Meta's config.json has num_key_value_heads 8",
)
wrong_tp8pp2 = layers / pp * max(1, wrong_kv / tp8) * kv_layer_head
check(wrong_tp8pp2 == kv_tp16, "with 16 KV heads, TP8 x PP2 would hold no more tokens per GPU than TP16")
claim("wrong_config_missed_capacity", tok_tp8pp2 / (budget / wrong_tp8pp2), unit="x")
print(f"params {params / 1e9:.2f}B, weights/GPU {w_gpu / 1e9:.1f} GB, budget {budget / 1e9:.1f} GB")
print(f"KV/token/GPU tp16 {kv_tp16 / 1024:.1f} KiB, tp8pp2 {kv_tp8pp2 / 1024:.2f} KiB")
print(f"tokens tp16 {tok_tp16:,.0f} ({req_tp16:.2f} req), tp8pp2 {tok_tp8pp2:,.0f} ({req_tp8pp2:.2f} req)")

# %% [markdown]
# ## The link the layout crosses
# TP16 runs two all-reduces per layer across the node boundary; PP2 sends one hidden-state vector per token
# between stages. NVLink is 900 GB/s bidirectional (450 per direction); the NIC 400 Gb/s = 50 GB/s per direction.

# %%
nic_gbs = claim("nic_gbytes_per_dir", nic / 8, unit="GB/s")
link_ratio = claim("nvlink_over_nic", (nvlink / 2) / nic_gbs, unit="x")
# vLLM's Llama hands IntermediateTensors({"hidden_states", "residual"}) to the next stage
# (vllm/model_executor/models/llama.py @e06c9ba2 LlamaModel.forward, when not get_pp_group().is_last_rank):
# two hidden-size vectors per token, not one.
pp_tensors = given("pp_tensors_per_token", 2, source="vllm/model_executor/models/llama.py @e06c9ba2 LlamaModel.forward: "
                   "IntermediateTensors carries hidden_states and residual")
hidden_bytes = claim("pp_bytes_per_token", pp_tensors * hidden * bf16, unit="B")
claim("pp_hidden_state_bytes", hidden * bf16, unit="B")
check(link_ratio == 9, "NVLink per direction is 9x the NIC")
print(f"NIC {nic_gbs} GB/s; NVLink/NIC {link_ratio}x; PP handoff {hidden_bytes / 1024:.0f} KiB/token")
per_layer_ar = given(
    "allreduces_per_layer", 2, source="Megatron-LM tensor parallelism: one all-reduce after attention, one after the MLP"
)
allreduces = claim("tp_allreduces_per_step", per_layer_ar * layers)
claim("tp16_share_over_nic", (gpus - node) / gpus, unit="fraction")  # ranks outside the first node
claim("fp8_tp8_gpu_share", tp8 / gpus, unit="fraction")  # GPUs per FP8 TP8 replica against BF16 TP16
claim("kv_heads_per_rank_tp16_unrounded", kv_heads / gpus, unit="heads")
check(allreduces == 252, "two all-reduces per layer, 252 per step")

# %% [markdown]
# ## The third option: FP8 weights on one node at TP8
# 1 byte per parameter puts 50.7 GB per GPU on 8 GPUs (an even split: TP equals the KV-head count, nothing replicated).

# %%
fp8 = given("fp8_bytes", 1, unit="B", source="FP8 weights are 1 byte per parameter")
w_gpu_fp8 = claim("weights_per_gpu_fp8_tp8", params * fp8 / tp8, unit="B")
check(abs(w_gpu_fp8 - w_gpu) < 1, "FP8 at TP8 has the same weights per GPU as BF16 over 16 GPUs split evenly")
check(w_gpu_fp8 < w_gpu_tp16, "and less than BF16 TP16, which replicates its K/V projections")
node_tokens_fp8 = claim("tokens_fp8_tp8", (requested - w_gpu_fp8 - overheads) / kv_tp8, unit="tokens")
node_hbm = claim("node_hbm", node * hbm, unit="GB")
nvlink_dir = claim("nvlink_per_direction", nvlink / 2, unit="GB/s")
heads_rank_tp16 = max(1, kv_heads / gpus)  # a rank cannot hold a fraction of a head
check(heads_rank_tp16 == 1, "at TP16 every rank still holds one whole KV head")
heads_rank_tp8 = claim("kv_heads_per_rank_tp8", max(1, kv_heads / tp8), unit="heads")
capacity_share = claim("tp16_capacity_share", tok_tp16 / tok_tp8pp2, unit="fraction")
check(0.45 < capacity_share < 0.5, "TP16 keeps under half the tokens of TP8 x PP2 (duplicate KV and K/V weights)")
layers_stage = claim("layers_per_stage", layers / pp, unit="layers")
