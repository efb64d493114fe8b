# %% [markdown]
# # Kimi K2 against DeepSeek-V3 on the same expert-parallel cluster
# Kimi K2: github:MoonshotAI/Kimi-K2 README.md @11062d11 (61 layers incl. 1 dense, hidden 7168, expert hidden 2048,
# 64 attention heads, 384 experts, 8 selected, 1 shared, MLA); its config.json's routing and latent sizes
# (n_group 1, topk_group 1, kv_lora_rank 512, qk_rope_head_dim 64) read through copies of that file. DeepSeek-V3
# from the fact base (config_671B.json). FP8 weights at 1 byte. H200 budget as vLLM computes it.

# %%
import math

from qbank.verify import check, claim, fact, given

K2 = "github:MoonshotAI/Kimi-K2 README.md @11062d119a82873f7f786cd2733c57d42ee65b79 model summary"
K2CFG = "moonshotai Kimi-K2 config.json (copies in public test fixtures)"
k2_layers = given("k2_layers", 61, unit="layers", source=K2 + ": 61 layers, dense layer included")
k2_dense = given("k2_dense_layers", 1, unit="layers", source=K2 + ": 1 dense layer")
k2_E = given("k2_experts", 384, unit="experts", source=K2 + ": 384 experts")
k2_k = given("k2_top_k", 8, unit="experts", source=K2 + ": 8 selected experts per token")
k2_heads = given("k2_heads", 64, unit="heads", source=K2 + ": 64 attention heads")
k2_ffn = given("k2_expert_ffn", 2048, unit="dims", source=K2 + ": MoE hidden dimension per expert 2048")
k2_groups = given("k2_topk_group", 1, source=K2CFG + ": n_group 1, topk_group 1 (no node-limited routing)")
d = fact("deepseek_v3.hidden_size", "d_model")
ds_L = fact("deepseek_v3.num_hidden_layers", "ds_layers")
ds_dense = fact("deepseek_v3.first_k_dense_replace", "ds_dense_layers")
ds_E = fact("deepseek_v3.n_routed_experts", "ds_experts")
ds_k = fact("deepseek_v3.num_experts_per_tok", "ds_top_k")
ds_heads = fact("deepseek_v3.num_attention_heads", "ds_heads")
ds_ffn = fact("deepseek_v3.moe_intermediate_size", "ds_expert_ffn")
kv_lora = fact("deepseek_v3.kv_lora_rank", "kv_lora")
rope = fact("deepseek_v3.qk_rope_head_dim", "rope_dim")
ds_topk_group = given("ds_topk_group", 4, unit="nodes", source="DeepSeek-V3 config topk_group=4: at most 4 nodes")
mats = given("expert_matrices", 3, source="SwiGLU expert: gate, up and down projections")
h200_total = fact("h200_sxm.cuda_total_memory", "h200_total")
util = fact("vllm.gpu_memory_utilization_default", "gpu_util")
h200_bw = fact("h200_sxm.hbm_bandwidth", "h200_bw")
h200_peak = fact("h200_sxm.bf16_dense", "h200_flops")
node = given("gpus_per_node", 8, unit="GPUs", source="HGX H200: 8 GPUs per node")
nodes = given("nodes", 8, unit="nodes", source="the question's hypothetical: EP64 over 8 HGX H200 nodes")
check(k2_ffn == ds_ffn, "same expert shape: only the count differs")

# %% [markdown]
# ## Weights: routed experts alone

# %%
expert_b = mats * d * ds_ffn
k2_moe = claim("k2_moe_layers", k2_layers - k2_dense, unit="layers")
ds_moe = claim("ds_moe_layers", ds_L - ds_dense, unit="layers")
k2_routed = claim("k2_routed_bytes", k2_moe * k2_E * expert_b, unit="B")
ds_routed = claim("ds_routed_bytes", ds_moe * ds_E * expert_b, unit="B")
node_budget = claim("h200_node_budget", node * util * h200_total, unit="B")
claim("k2_routed_share_of_node", k2_routed / node_budget, unit="fraction")
claim("ds_routed_share_of_node", ds_routed / node_budget, unit="fraction")
claim("k2_over_ds_routed", k2_routed / ds_routed, unit="x")
k2_active = claim("k2_active_routed", k2_moe * k2_k * expert_b, unit="params")
ds_active = claim("ds_active_routed", ds_moe * ds_k * expert_b, unit="params")
claim("k2_sparsity", k2_k / k2_E, unit="fraction")
claim("ds_sparsity", ds_k / ds_E, unit="fraction")

# %% [markdown]
# ## EP64: experts and bytes per GPU

# %%
ep = claim("ep_gpus", nodes * node, unit="GPUs")
claim("k2_experts_per_gpu", k2_E / ep, unit="experts")
claim("ds_experts_per_gpu", ds_E / ep, unit="experts")
claim("k2_expert_bytes_per_gpu", k2_routed / ep, unit="B")
claim("ds_expert_bytes_per_gpu", ds_routed / ep, unit="B")
gpu_budget = claim("h200_gpu_budget", util * h200_total, unit="B")
extra_gpu = claim("k2_extra_expert_bytes_per_gpu", (k2_routed - ds_routed) / ep, unit="B")
claim("k2_extra_share_of_gpu_budget", extra_gpu / gpu_budget, unit="fraction")

# %% [markdown]
# ## Routing: nodes a token reaches (uniform routing, experts spread evenly over 8 nodes)
# K2 has no group limit, so a token's 8 experts land on any nodes; DeepSeek-V3 caps it at 4.

# %%
per_node = k2_E / nodes
p_miss = math.comb(int(k2_E - per_node), int(k2_k)) / math.comb(int(k2_E), int(k2_k))
k2_nodes_hit = claim("k2_nodes_per_token", nodes * (1 - p_miss), unit="nodes")
k2_remote = claim("k2_remote_nodes_per_token", k2_nodes_hit - (1 - p_miss), unit="nodes")
ds_remote = claim("ds_remote_nodes_per_token", ds_topk_group - ds_topk_group / nodes, unit="nodes")
claim("k2_over_ds_nic_copies", k2_remote / ds_remote, unit="x")
claim("k2_extra_nic_share", k2_remote / ds_remote - 1, unit="fraction")
check(k2_nodes_hit > ds_topk_group, "without the group limit K2 tokens reach more nodes than DeepSeek-V3's cap")

# %% [markdown]
# ## MLA decode attention: same latent cache per token, half the heads reading it
# Absorbed MLA, one query per sequence: per head and cached token, 2 * (kv_lora + rope) FLOP for scores and
# 2 * kv_lora for values, against (kv_lora + rope) BF16 elements read once for all heads.

# %%
bf16 = given("bf16_bytes", 2, unit="B", source="BF16 latent cache: 2 bytes per element")
fpm = given("flop_per_mac", 2, source="one multiply-add is 2 FLOP")
per_head = fpm * (kv_lora + rope) + fpm * kv_lora
bytes_tok = (kv_lora + rope) * bf16
ds_ai = claim("ds_mla_intensity", ds_heads * per_head / bytes_tok)
k2_ai = claim("k2_mla_intensity", k2_heads * per_head / bytes_tok)
claim("head_ratio", k2_heads / ds_heads, unit="x")
ridge = claim("h200_ridge", h200_peak / h200_bw)
check(ds_ai > ridge > k2_ai, "DeepSeek-V3's decode attention sits above the H200 ridge, K2's below")
# Under attention TP each GPU holds heads / TP query heads but must still read the whole latent (one shared KV
# head, replicated on every rank): the intensity divides by TP. Data-parallel attention keeps all heads together.
attn_tp = given("attn_tp", 8, unit="GPUs", source="comparison layout: attention tensor-parallel over one 8-GPU node")
claim("ds_mla_intensity_tp8", ds_ai / attn_tp)
claim("k2_mla_intensity_tp8", k2_ai / attn_tp)
check(ds_ai / attn_tp < ridge, "under attention TP8 both models' decode attention is memory-bound")
print(k2_routed / 1e9, ds_routed / 1e9, node_budget / 1e9, k2_nodes_hit, k2_remote, ds_remote, ds_ai, k2_ai, ridge)
