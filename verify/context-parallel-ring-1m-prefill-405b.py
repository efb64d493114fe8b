# %% [markdown]
# # Context parallelism for a 1M-token prefill of Llama-3.1-405B: can the ring hide its transfers?
# Shape from the fact base (Meta sku_list.py). Layout from "Context Parallelism for Scalable Million-Token
# Inference" (arXiv:2411.01783, abstract): 128 H100s in 16 nodes, TP8 inside a node, CP16 across nodes; it reports
# a 1M-token prefill of Llama3 405B in 77 s at 63% FLOPS utilization, and two exact ring variants, pass-KV and pass-Q.
# Each GPU's NIC: 400 Gb/s ConnectX-7. FLOP counts as FlashAttention's benchmark counts them.

# %%
from qbank.verify import check, claim, fact, given

L = fact("llama3_1_405b.num_hidden_layers", "layers")
d = fact("llama3_1_405b.hidden_size", "hidden")
h = fact("llama3_1_405b.num_attention_heads", "q_heads")
kvh = fact("llama3_1_405b.num_key_value_heads", "kv_heads")
hd = fact("llama3_1_405b.head_dim", "head_dim")
ffn = fact("llama3_1_405b.intermediate_size", "ffn")
peak = fact("h100_sxm.bf16_dense", "bf16_flops")
nic = fact("networking.nic_per_gpu_connectx7", "nic_gbit")
SRC = "arXiv:2411.01783 abstract"
gpus = given("gpus", 128, unit="GPUs", source=SRC + ": up to 128 H100 GPUs across 16 nodes")
cp = given("cp_nodes", 16, unit="nodes", source=SRC + ": 16 nodes")
tp = fact("h100_sxm.nvlink_domain", "tp_gpus")
n = given("prompt_tokens", 1048576, unit="tokens", source=SRC + ": 1M context prefill (read as 2^20)")
paper_s = given("paper_prefill_time", 77, unit="s", source=SRC + ": 1M prefill of Llama3 405B in 77 s")
paper_util = given("paper_flops_util", 0.63, unit="fraction", source=SRC + ": 63% FLOPS utilization")
bf16 = given("bf16_bytes", 2, unit="B", source="BF16: 2 bytes per element")
coeff = given("attn_matmul_coeff", 4, source="FlashAttention benchmark flops(): 4 * seqlen^2 * heads * head_dim")
check(cp * tp == gpus, "16 nodes x TP8 = 128 GPUs")

# %% [markdown]
# ## The whole prefill, and a sanity check against the paper

# %%
w_layer = 2 * d * d + 2 * d * kvh * hd + 3 * d * ffn
lin = 2 * w_layer * L * n
attn = coeff * n**2 * h * hd / 2 * L
total = claim("prefill_flop", lin + attn, unit="FLOP")
claim("attn_share", attn / (lin + attn), unit="fraction")
t_peak = claim("prefill_at_peak", total / (gpus * peak * 1e12), unit="s")
t_util = claim("prefill_at_paper_util", t_peak / paper_util, unit="s")
claim("paper_over_model", paper_s / t_util, unit="x")

# %% [markdown]
# ## One ring step, per GPU per layer (pass-KV)
# Each node holds c = N / CP tokens; each GPU holds h/TP query heads and kvh/TP KV heads of them. In each of the
# CP - 1 steps a GPU sends its KV chunk to the next node over its own NIC while computing its queries against the
# chunk it holds. Full (unmasked) blocks shown; causal load balancing halves the average compute.

# %%
c = claim("tokens_per_node", n / cp, unit="tokens")
h_gpu = h / tp
kv_gpu = kvh / tp
check(kv_gpu == 1, "one KV head per GPU at TP8")
claim("kv_heads_per_gpu", kv_gpu, unit="heads")
claim("q_heads_per_gpu", h_gpu, unit="heads")
causal = claim("causal_factor", 0.5, unit="x")
given("chunks_per_node", 2, unit="chunks", source="load-balanced causal split: a front and a back chunk per node")
kv_tok_gpu = claim("kv_bytes_per_token_gpu", 2 * kv_gpu * hd * bf16, unit="B")
q_tok_gpu = claim("q_bytes_per_token_gpu", h_gpu * hd * bf16, unit="B")
nic_bps = nic * 1e9 / 8
send = claim("kv_chunk_send_time", c * kv_tok_gpu / nic_bps, unit="s")
comp = claim("block_compute_time", coeff * c * c * h_gpu * hd / (peak * 1e12), unit="s")
claim("compute_over_comm", comp / send, unit="x")
c_min = claim("min_tokens_per_node_to_hide", kv_tok_gpu / nic_bps / (coeff * h_gpu * hd / (peak * 1e12)), unit="tokens")
claim("min_tokens_causal", c_min / causal, unit="tokens")
claim("q_over_kv_bytes", q_tok_gpu / kv_tok_gpu, unit="x")
check(comp > 10 * send, "at 1M tokens the ring transfer hides under compute with an order of margin")

# %% [markdown]
# ## Pass-Q against pass-KV when most of the context is already cached
# A follow-up turn: T new tokens against a cached context of N. Pass-KV circulates the whole KV (N + T tokens);
# pass-Q circulates the new queries (T tokens), and the partial outputs return to their owners (same size as Q).

# %%
new = given("new_tokens", 8192, unit="tokens", source="the question's hypothetical: an 8K-token follow-up turn")
kv_bytes_passkv = claim("passkv_bytes_per_gpu_layer", (n + new) / cp * kv_tok_gpu, unit="B")
q_bytes_passq = claim("passq_bytes_per_gpu_layer", 2 * new / cp * q_tok_gpu, unit="B")
claim("passkv_over_passq", kv_bytes_passkv / q_bytes_passq, unit="x")
claim("passq_breakeven_new_share", kv_tok_gpu / (2 * q_tok_gpu - kv_tok_gpu), unit="fraction")

# %% [markdown]
# ## Memory per GPU: FP8 weights (BF16 would not fit at TP8) plus this GPU's share of the cache

# %%
params = L * w_layer + 2 * fact("llama3_1_405b.vocab_size", "vocab") * d
w_bf16 = claim("weights_bf16_per_gpu", params * bf16 / tp, unit="B")
w_fp8 = claim("weights_fp8_per_gpu", params / tp, unit="B")
hbm = fact("h100_sxm.hbm_capacity", "hbm_gb")
check(w_bf16 > hbm * 1e9, "BF16 weights alone exceed an 80 GB H100 at TP8")
kv_gpu_bytes = claim("kv_per_gpu", c * kv_tok_gpu * L, unit="B")
budget = fact("vllm.gpu_memory_utilization_default", "gpu_util") * fact("h100_sxm.cuda_total_memory", "cuda_total")
claim("vllm_budget_per_gpu", budget, unit="B")
check(w_fp8 + kv_gpu_bytes < budget, "FP8 weights + the cache share fit vLLM's budget on each GPU")
one_node = claim("one_node_prefill_at_peak", total / (tp * peak * 1e12), unit="s")
kv_one_node = claim("kv_per_gpu_one_node", n * kv_tok_gpu * L, unit="B")
check(w_fp8 + kv_one_node > budget, "on one node the 1M cache does not fit beside even FP8 weights")
print(total, t_peak, t_util, c, send * 1e3, comp * 1e3, c_min, kv_bytes_passkv / 1e6, q_bytes_passq / 1e6)
