# %% [markdown]
# # Mixtral-8x7B on one 8-GPU node: tensor-parallel experts or expert-parallel experts?
# Config from the fact base (Mixtral-8x7B-Instruct-v0.1 config.json). Ring all-reduce sends 2(n-1)/n of the buffer
# per GPU (NCCL's ring algorithm); the all-to-all sends each token's hidden state to its k experts' GPUs and back.
# Routing is uniform in the load simulation (the best case for EP); the sweep shows how the straggler shrinks with T.

# %%
import torch

from qbank.verify import check, claim, fact, given

L = fact("mixtral_8x7b.num_hidden_layers", "layers")
d = fact("mixtral_8x7b.hidden_size", "hidden")
ffn = fact("mixtral_8x7b.intermediate_size", "expert_ffn")
E = fact("mixtral_8x7b.num_local_experts", "experts")
k = fact("mixtral_8x7b.num_experts_per_tok", "top_k")
h = fact("mixtral_8x7b.num_attention_heads", "q_heads")
kvh = fact("mixtral_8x7b.num_key_value_heads", "kv_heads")
n = given("gpus", 8, unit="GPUs", source="the question's hypothetical: one 8-GPU HGX node")
bf16 = given("bf16_bytes", 2, unit="B", source="BF16: 2 bytes per element")
hd = d / h
given("nodes", 1, unit="nodes", source="the question's hypothetical: one HGX node")
claim("experts_per_gpu_ep", E / n, unit="experts")

# %% [markdown]
# ## Memory: the same expert bytes per GPU either way

# %%
expert_params = 3 * d * ffn
tp_slice = claim("tp_expert_slice", ffn / n, unit="dims")
per_gpu_tp = E * 3 * d * (ffn / n) * bf16
per_gpu_ep = (E / n) * expert_params * bf16
claim("expert_bytes_per_gpu_layer", per_gpu_ep, unit="B")
check(per_gpu_tp == per_gpu_ep, "TP and EP hold the same expert bytes per GPU")
attn_params = 2 * d * d + 2 * d * kvh * hd
attn_repl = claim("attn_bytes_replicated", L * attn_params * bf16, unit="B")
attn_tp = claim("attn_bytes_tp", L * attn_params * bf16 / n, unit="B")

# %% [markdown]
# ## Wire bytes per GPU per MoE layer, per token of the global batch

# %%
tp_bytes = claim("tp_allreduce_bytes_per_token", 2 * (n - 1) / n * d * bf16, unit="B")
ep_bytes = claim("ep_alltoall_bytes_per_token", (1 / n) * k * (n - 1) / n * d * bf16 * 2, unit="B")
ratio = claim("ep_over_tp_bytes", ep_bytes / tp_bytes, unit="x")
check(abs(ratio - k / n) < 1e-12, "EP moves k/n of what the TP all-reduce moves")

# %% [markdown]
# ## The straggler: busiest GPU's expert load over the mean, uniform routing (seeded simulation)

# %%
gen = torch.Generator().manual_seed(0)
trials = given("trials", 4000, source="Monte Carlo trials (seeded)")


def imbalance(tokens: int) -> float:
    """E[max expert load] / mean load for `tokens` tokens routed top-k uniformly over E experts."""
    w = torch.ones(int(E)).expand(int(trials) * tokens, -1)
    picks = torch.multinomial(w, int(k), replacement=False, generator=gen).view(int(trials), tokens * int(k))
    loads = torch.nn.functional.one_hot(picks, int(E)).sum(dim=1).float()
    return (loads.max(dim=1).values.mean() / (tokens * k / E)).item()


for t in (8, 64, 512):
    given(f"batch_{t}", t, unit="tokens", source="sweep point: tokens per step across the node")
    claim(f"ep_imbalance_{t}", imbalance(t), unit="x")

# %% [markdown]
# ## Where TP runs out: block-quantized experts (DeepSeek-V3, FP8 with 128x128 weight blocks)

# %%
ds_ffn = fact("deepseek_v3.moe_intermediate_size", "ds_expert_ffn")
block = given(
    "fp8_weight_block",
    128,
    unit="dims",
    source="DeepSeek-V3 arXiv:2412.19437 §3.3.2: weights quantized per 128x128 block; vLLM "
    "model_executor/layers/quantization/fp8.py create_weights raises 'is not divisible by weight quantization block_n'",
)
for tp in (8, 16, 32):
    given(f"tp_{tp}", tp, unit="GPUs", source="sweep point: TP degree over the experts")
    claim(f"ds_slice_tp{tp}", ds_ffn / tp, unit="dims")
check(ds_ffn / 16 == block and ds_ffn / 32 < block, "TP16 leaves one block per shard; TP32 cannot load")
claim("ds_blocks_per_slice_tp8", ds_ffn / 8 / block, unit="blocks")

# %% [markdown]
# ## When does the straggler matter? Only once an expert's GEMM is compute-bound
# Per expert, each routed token costs 2 FLOP per weight and the weights are read once: intensity = tokens per expert
# (BF16). Below the H100 ridge every touched expert costs one weight read, whatever its load.

# %%
vocab = fact("mixtral_8x7b.vocab_size", "vocab")
peak = fact("h100_sxm.bf16_dense", "bf16_flops")
bw = fact("h100_sxm.hbm_bandwidth", "hbm_bw")
ridge = claim("h100_ridge", peak / bw)
claim("batch_where_load_matters", ridge * E / k, unit="tokens")
params = L * (attn_params + E * expert_params + d * E) + 2 * vocab * d
claim("total_params", params, unit="params")
w_gpu = claim("weight_bytes_per_gpu_tp", params * bf16 / n, unit="B")
claim("dp_attention_extra_bytes", attn_repl - attn_tp, unit="B")
claim("dp_attention_extra_share", (attn_repl - attn_tp) / w_gpu, unit="fraction")
