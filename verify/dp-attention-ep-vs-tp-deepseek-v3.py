# %% [markdown]
# # DeepSeek-V3 on one 8x H200 node: TP8 everywhere, or data-parallel attention with EP8 experts
# Config from the facts file (config_671B.json). Weights FP8 with 128x128 blocks (arXiv:2412.19437 §3.3.2),
# dispatch in FP8 with one FP32 scale per 128 elements, combine in BF16 (same section). Under TP the MLA latent
# cache (kv_lora_rank + qk_rope_head_dim per token per layer) is one shared "head": every TP rank stores all of
# it (SGLang v0.4 release notes, lmsys.org/blog/2024-12-04-sglang-v0-4, "Data-Parallelism Attention for DeepSeek
# Models": TP on 8 GPUs "will lead to duplicated KV cache"; SGLang docs, Data Parallelism Attention: "MLA models like
# DeepSeek have only one KV head. With standard Tensor Parallelism: KV cache duplicated across all GPUs"). With DP attention each GPU keeps only its own
# requests' latents and its own copy of the attention weights; routed experts are split 32 per GPU (EP8).

# %%
from qbank.verify import check, claim, fact, given

L = fact("deepseek_v3.num_hidden_layers", "layers")
dense = fact("deepseek_v3.first_k_dense_replace", "dense_layers")
E = fact("deepseek_v3.n_routed_experts", "experts")
k = fact("deepseek_v3.num_experts_per_tok", "top_k")
d = fact("deepseek_v3.hidden_size", "hidden")
ffn = fact("deepseek_v3.intermediate_size", "dense_ffn")
moe_ffn = fact("deepseek_v3.moe_intermediate_size", "moe_ffn")
kv_rank = fact("deepseek_v3.kv_lora_rank", "kv_lora_rank")
q_rank = fact("deepseek_v3.q_lora_rank", "q_lora_rank")
rope = fact("deepseek_v3.qk_rope_head_dim", "rope_dim")
nope = fact("deepseek_v3.qk_nope_head_dim", "nope_dim")
v_dim = fact("deepseek_v3.v_head_dim", "v_dim")
heads = fact("deepseek_v3.num_attention_heads", "heads")
vocab = fact("deepseek_v3.vocab_size", "vocab")
shared = fact("deepseek_v3.n_shared_experts", "shared")
cuda_total = fact("h200_sxm.cuda_total_memory", "cuda_total")
util = fact("vllm.gpu_memory_utilization_default", "util")
gpus = fact("h200_sxm.nvlink_domain", "gpus", unit="GPUs")
fp8 = given("fp8_bytes", 1, unit="B", source="FP8 E4M3 weights and dispatch activations: 1 byte")
bf16 = given("bf16_bytes", 2, unit="B", source="BF16: 2 bytes (latent cache, combine, all-reduce)")
block = given("fp8_block", 128, unit="elements", source="arXiv:2412.19437 §3.3.2: weights quantized in 128x128 blocks; "
              "config quantization_config weight_block_size [128, 128]")
tile = given("scale_tile", 128, unit="elements", source="arXiv:2412.19437 §3.3.2: activations scaled per 1x128 tile")
scale_b = given("scale_bytes", 4, unit="B", source="FP32 scaling factors (arXiv:2412.19437 §3.3)")
overheads = given("runtime_overheads", 6.0e9, unit="B", source="the question's hypothetical per-GPU activation peak, "
                  "non-torch and graph memory for an MoE at this batch; the conclusion below holds for any value "
                  "under the DP layout's pool")
context = given("context", 8192, unit="tokens", source="the question's hypothetical mean context")

# %% [markdown]
# ## Parameters by kind

# %%
moe_layers = claim("moe_layers", L - dense, unit="layers")
attn_layer = (d * q_rank + q_rank * heads * (nope + rope) + d * (kv_rank + rope) + kv_rank * heads * (nope + v_dim)
              + heads * v_dim * d)
attn = claim("attention_params", L * attn_layer, unit="params")
routed = claim("routed_expert_params", moe_layers * E * 3 * d * moe_ffn, unit="params")
shared_p = moe_layers * shared * 3 * d * moe_ffn
dense_p = dense * 3 * d * ffn
embed = 2 * vocab * d
rest = claim("non_routed_params", attn + shared_p + dense_p + embed, unit="params")
total = routed + rest
check(abs(total / 1e9 - 671) < 10, "the parts add up to DeepSeek-V3's 671B (norms and router weights omitted)")

# %% [markdown]
# ## Weights and KV pool per GPU under each layout

# %%
# Under TP the low-rank down-projections q_a_proj and kv_a_proj_with_mqa are ReplicatedLinear in SGLang's DeepSeek
# model (sglang python/sglang/srt/models/deepseek_v2.py): every rank holds all of them.
replicated = claim("tp_replicated_params", L * (d * q_rank + d * (kv_rank + rope)), unit="params")
w_tp = claim("weights_per_gpu_tp8", ((total - replicated) / gpus + replicated) * fp8, unit="B")
w_dp = claim("weights_per_gpu_dp_ep", rest * fp8 + routed * fp8 / gpus, unit="B")
claim("dp_extra_weights", w_dp - w_tp, unit="B")
request = claim("requested_per_gpu", cuda_total * util, unit="B")
pool_tp = claim("pool_tp8", request - w_tp - overheads, unit="B")
pool_dp = claim("pool_dp_ep", request - w_dp - overheads, unit="B")
latent = claim("latent_bytes_per_token", L * (kv_rank + rope) * bf16, unit="B")
tok_tp = claim("unique_tokens_tp8", pool_tp / latent, unit="tokens")  # every rank holds the same latents
tok_dp = claim("unique_tokens_dp_ep", gpus * pool_dp / latent, unit="tokens")
claim("capacity_ratio", tok_dp / tok_tp, unit="x")
claim("seqs_tp8", tok_tp / context, unit="sequences")
claim("seqs_dp_ep", tok_dp / context, unit="sequences")
check(tok_dp > 4 * tok_tp, "DP attention holds over 4x the unique tokens despite replicated attention weights")

# %% [markdown]
# ## Bytes each GPU sends per layer, per sequence in the batch
# TP8: two ring all-reduces per layer over the whole batch (every GPU sees every token), BF16, 2(n-1)/n of the
# message out per GPU. DP+EP8: attention is local; each MoE layer dispatches a GPU's own tokens to their 8 experts
# (FP8 + scales) and combines them back (BF16); with experts spread evenly, 7 of 8 copies leave the GPU.

# %%
ar_out = claim("tp_allreduce_out_per_seq", 2 * (2 * (gpus - 1) / gpus) * gpus * d * bf16, unit="B")  # per seq of the GPU's share
remote = claim("remote_fraction", (gpus - 1) / gpus, unit="fraction")
disp = d * fp8 + d / tile * scale_b
comb = d * bf16
ep_out = claim("ep_out_per_seq", k * remote * (disp + comb), unit="B")
claim("tp_over_ep_bytes", ar_out / ep_out, unit="x")
# A dispatch that sends a token once per destination GPU (DeepEP's normal kernels take is_token_in_rank, a
# [num_tokens, num_ranks] mask) pays per GPU, not per expert. DeepSeek-V3's router first keeps the top
# n_limited_groups of n_expert_groups groups of 32 experts, then the top 8 inside them; at EP8 with 32 contiguous
# experts per GPU a group is a GPU, so a token reaches at most 4 GPUs and at most 4 remote ones.
n_group = given("n_expert_groups", 8, source="github:deepseek-ai/DeepSeek-V3 "
                "inference/configs/config_671B.json n_expert_groups = 8 (HF config.json n_group)")
topk_group = given("n_limited_groups", 4, source="config_671B.json n_limited_groups = 4 (HF config.json "
                   "topk_group); inference/model.py Gate keeps the top topk_groups groups before the top-k")
check(E / n_group == E / gpus, "at EP8 each expert group is exactly one GPU's experts")
max_remote = claim("max_remote_gpus", min(topk_group, gpus - 1), unit="GPUs")
ep_dedup = claim("ep_out_per_seq_dedup", max_remote * (disp + comb), unit="B")
claim("tp_over_ep_bytes_dedup", ar_out / ep_dedup, unit="x")
check(ar_out > ep_out, "per sequence a GPU serves, TP8 moves more bytes than EP8 dispatch and combine")

# %% [markdown]
# ## Why not push TP further: the FP8 block

# %%
tp8_cols = claim("expert_cols_tp8", moe_ffn / gpus, unit="elements")
tp32 = given("tp32", 32, unit="GPUs", source="the question's hypothetical: TP across four 8-GPU nodes")
tp32_cols = claim("expert_cols_tp32", moe_ffn / tp32, unit="elements")
check(tp8_cols % block == 0 and tp32_cols % block != 0, "TP8 keeps whole 128-wide blocks per expert; TP32 cannot")
experts_gpu = claim("experts_per_gpu", E / gpus, unit="experts")
print(f"attn {attn/1e9:.2f}B routed {routed/1e9:.1f}B rest {rest/1e9:.2f}B; w tp {w_tp/1e9:.1f} dp {w_dp/1e9:.1f}")
print(f"pool tp {pool_tp/1e9:.1f} dp {pool_dp/1e9:.1f}; tokens tp {tok_tp:,.0f} dp {tok_dp:,.0f}; {tok_dp/tok_tp:.2f}x")
print(f"bytes/seq tp {ar_out:,.0f} ep {ep_out:,.0f}")
claim("tp_share", 1 / gpus, unit="fraction")
given("allreduces_per_layer", 2, source="Megatron-LM tensor parallelism (arXiv:1909.08053 §3): after attention and after the MLP")
given("param_classes", 2, source="the answer's split: routed experts and everything else")
given("ring_phases", 2, source="NCCL v2.30.7-1 src/graph/tuning.cc: an all-reduce ring runs 2*(nRanks-1) steps")
claim("blocks_per_shard_tp8", tp8_cols / block, unit="blocks")
claim("blocks_per_shard_tp32", tp32_cols / block)
given("tp32_nodes", 4, unit="nodes", source="the question's hypothetical: 32 GPUs as four 8-GPU nodes")
given("layouts", 2, source="the question's two candidate layouts")
claim("latent_replication", gpus / 1, unit="x")  # under TP every rank stores every latent
claim("tp8_weight_share", w_tp / (total * fp8), unit="fraction")
alt = given("runtime_overheads_alt", 10.0e9, unit="B", source="the question's sensitivity case: more runtime memory")
claim("capacity_ratio_alt", gpus * (request - w_dp - alt) / (request - w_tp - alt), unit="x")
