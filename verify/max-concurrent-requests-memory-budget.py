# %% [markdown]
# # Maximum concurrency: the KV pool divided by the per-request footprint
# vLLM (gpu_worker.determine_available_memory, via the fact base): requested = total device memory × utilization,
# where the total is what cudaMemGetInfo reports (torch.cuda.mem_get_info()[1]): 79.18 GiB = 85.02 GB on an
# H100 80GB, not the marketed 80e9 B (vllm/v1/worker/gpu_worker.py @0012cf69);
# KV pool = requested − (weights + peak activation + non-torch memory) − CUDA-graph estimate.
# Weights and KV per token come from Llama-3.1-70B's config. The activation peak, non-torch memory and
# graph pool are example figures: vLLM measures the first two at startup and estimates the third, so the
# answer labels them as examples and tells the reader to read their own from the startup log.

# %%
import math

from qbank.verify import check, claim, fact, given

layers = fact("llama3_1_70b.num_hidden_layers", "layers")
d_model = fact("llama3_1_70b.hidden_size", "d_model")
q_heads = fact("llama3_1_70b.num_attention_heads", "q_heads")
kv_heads = fact("llama3_1_70b.num_key_value_heads", "kv_heads")
head_dim = fact("llama3_1_70b.head_dim", "head_dim")
ffn = fact("llama3_1_70b.intermediate_size", "ffn_dim")
vocab = fact("llama3_1_70b.vocab_size", "vocab")
hbm = fact("h100_sxm.hbm_capacity", "hbm_gb")
cuda_total = fact("h100_sxm.cuda_total_memory", "cuda_total_bytes")
check(cuda_total > hbm * 1e9, "cudaMemGetInfo's total (GiB-sized HBM less the driver's share) exceeds 80e9 B")
util = fact("vllm.gpu_memory_utilization_default", "util_v021")
util_old = given("util_before_v021", 0.9, unit="fraction", source="vLLM docs v0.6.4 'default value of 0.9'; PR "
    "#2162 (facts: vllm.gpu_memory_utilization_default note)")
block = fact("vllm.block_size_default", "block_size")
tp = given("tp", 4, unit="GPUs", source="example deployment: TP=4 on one HGX H100")
max_len = given("max_model_len", 32768, unit="tokens", source="example max_model_len")
act_peak = given("activation_peak", 2.5e9, unit="B", source="example figure; vLLM measures it in a dummy run at "
    "max_num_batched_tokens")
non_torch = given("non_torch", 1.0e9, unit="B", source="example figure; CUDA context + NCCL buffers, measured "
    "by vLLM from cudaMemGetInfo")
graphs = given("cudagraph_estimate", 0.5e9, unit="B", source="example figure; estimated by a dummy capture since v0.21")
bytes_bf16 = given("bytes_bf16", 2, unit="B", source="bf16 stores 2 bytes per value")

# %% [markdown]
# ## Weights per GPU

# %%
per_layer = 2 * d_model * q_heads * head_dim + 2 * d_model * kv_heads * head_dim + 3 * d_model * ffn + 2 * d_model
params = (layers * per_layer
          + 2 * vocab * d_model + d_model)
total_params = claim("total_params", params, unit="params")
w_total = params * bytes_bf16
w_gpu = claim("weights_per_gpu", w_total / tp, unit="B")

# %% [markdown]
# ## The budget per GPU

# %%
requested = claim("requested", cuda_total * util, unit="B")
requested_old = claim("requested_old", cuda_total * util_old, unit="B")
requested_naive = claim("requested_if_80e9", hbm * 1e9 * util, unit="B")  # the common mistake
pool = claim("kv_pool_per_gpu", requested - w_gpu - act_peak - non_torch - graphs, unit="B")
pool_old = claim("kv_pool_per_gpu_old", requested_old - w_gpu - act_peak - non_torch, unit="B")
kv_heads_gpu = claim("kv_heads_per_gpu", math.ceil(kv_heads / tp), unit="heads")
kv_tok_gpu = claim("kv_bytes_per_token_per_gpu", 2 * layers * kv_heads_gpu * head_dim * bytes_bf16, unit="B")
tokens_pool = claim("pool_tokens", block * math.floor(pool / (kv_tok_gpu * block)), unit="tokens")
conc = claim("max_concurrency", tokens_pool / max_len, unit="requests")
conc_int = claim("max_concurrent_requests", math.floor(conc), unit="requests")
check(kv_tok_gpu == 80 * 2**10, "80 KiB per token per GPU at TP=4")
check(conc_int == 14, "14 full-length requests")
label_bytes = claim("label_bytes", hbm * 1e9, unit="B")
hidden = claim("request_hidden_by_label", requested - requested_naive, unit="B")
pool_naive = requested_naive - w_gpu - act_peak - non_torch - graphs
conc_naive = claim("max_concurrent_requests_if_80e9",
                   math.floor(block * math.floor(pool_naive / (kv_tok_gpu * block)) / max_len), unit="requests")
lost = claim("requests_lost_to_label", conc_int - conc_naive, unit="requests")
check(conc_naive == 12, "the decimal label gives the 12 of the earlier version")

# %% [markdown]
# ## Past the KV head count: TP=16 replicates heads
# With TP > n_kv each rank still needs at least one KV head: ceil(8/16) = 1, so KV per token per GPU stops
# shrinking at TP=8 while weights per GPU keep halving.

# %%
tp16 = given("tp_wide", 16, unit="GPUs", source="example: TP=16 across two HGX nodes")
tp8 = given("tp_at_kv_heads", 8, unit="GPUs", source="example: TP=8 on one HGX node, equal to the KV-head count")
check(tp8 == kv_heads, "TP=8 is the widest TP that still splits the KV heads")
doubling = claim("gpus_tp4_to_tp8", tp8 / tp, unit="x")
kv_gpu_16 = claim("kv_bytes_per_token_per_gpu_tp16",
                  2 * layers * math.ceil(kv_heads / tp16) * head_dim * bytes_bf16, unit="B")
kv_gpu_8 = claim("kv_bytes_per_token_per_gpu_tp8",
                 2 * layers * math.ceil(kv_heads / tp8) * head_dim * bytes_bf16, unit="B")
kv_gpu_4 = 2 * layers * math.ceil(kv_heads / tp) * head_dim * bytes_bf16
check(kv_gpu_4 == doubling * kv_gpu_8, "up to TP=8, doubling the GPUs halves KV per token per GPU: the pool in tokens doubles")
# Going from TP4 to TP8 halves KV per token per GPU AND halves the weights per GPU, so the pool in tokens more
# than doubles: the freed weight memory joins the pool as well.
w_gpu_8 = claim("weights_per_gpu_tp8", w_total / tp8, unit="B")
pool_8 = requested - w_gpu_8 - act_peak - non_torch - graphs
tokens_pool_8 = claim("pool_tokens_tp8", block * math.floor(pool_8 / (kv_gpu_8 * block)), unit="tokens")
pool_growth = claim("pool_tokens_tp4_to_tp8", tokens_pool_8 / tokens_pool, unit="x")
check(pool_growth > doubling, "the pool in tokens grows by more than the GPU count")
# Before v0.21 the graphs were captured in the slack outside the 0.9 request.
slack_old = claim("slack_outside_request_old", cuda_total - requested_old, unit="B")
slack_over_graphs = claim("slack_over_example_graphs", slack_old / graphs, unit="x")
check(slack_old > 10 * graphs, "the 0.9 default left far more slack than an example graph pool")
dup = claim("kv_replication_tp16", tp16 / kv_heads, unit="x")
check(kv_gpu_16 == kv_gpu_8 == 40 * 2**10, "40 KiB per token per GPU at TP=8 and at TP=16")
check(pool_old < pool, "the older 0.9 default leaves a smaller pool even without subtracting graphs")
print(f"params {params/1e9:.2f}B w/gpu {w_gpu/1e9:.2f} req {requested/1e9:.1f} pool {pool/1e9:.2f} old "
    "{pool_old/1e9:.2f}")
print(f"tokens {tokens_pool} conc {conc:.2f}")
