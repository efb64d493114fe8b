# %% [markdown]
# # Context parallelism for a 128K-token prefill of Llama-3.1-405B
# Layout as in Meta's context-parallel inference paper (arXiv:2411.01783, abstract and §1): TP8 inside each
# 8-GPU H100 node, the sequence split across nodes (CP), ring attention across nodes. With TP8 and 8 KV heads,
# each GPU owns 1 KV head and 16 query heads, and in a pass-KV ring sends its KV head's chunk to the same GPU
# of the next node over its own 400 Gb/s NIC. Causal attention with load-balanced sharding (each rank holds
# two mirrored halves of the sequence, as the paper does) gives every ring step about half a full block of work.

# %%
from qbank.verify import check, claim, fact, given

layers = fact("llama3_1_405b.num_hidden_layers", "layers")
hidden = fact("llama3_1_405b.hidden_size", "hidden")
q_heads = fact("llama3_1_405b.num_attention_heads", "q_heads")
kv_heads = fact("llama3_1_405b.num_key_value_heads", "kv_heads")
head_dim = fact("llama3_1_405b.head_dim", "head_dim")
inter = fact("llama3_1_405b.intermediate_size", "inter")
vocab = fact("llama3_1_405b.vocab_size", "vocab")
bf16_tflops = fact("h100_sxm.bf16_dense", "bf16_tflops")
nic = fact("networking.nic_per_gpu_connectx7", "nic_gbit")
node = fact("h100_sxm.nvlink_domain", "gpus_per_node")
bf16 = given("bf16_bytes", 2, unit="B", source="bf16 is 2 bytes")
prompt = given("prompt", 131072, unit="tokens", source="Llama 3.1's full context (sku_list CONTEXT_LENGTH), the "
               "question's prompt")
nodes = given("nodes", 16, unit="nodes", source="arXiv:2411.01783 abstract: up to 128 H100 GPUs across 16 nodes")
mfu = given("mfu", 0.63, unit="fraction", source="arXiv:2411.01783 abstract: 63% FLOPS utilization at 1M-token "
            "prefill on 128 H100s; used here to derate the datasheet rate")
paper_128k_1node = given("paper_128k_single_host", 60, unit="s", source="arXiv:2411.01783 §1: 'With a single H100 "
                         "GPU host (8 GPUs), it can take 60 seconds to serve 128K context length' (Llama3 405B)")
paper_128k_cp = given("paper_128k_cp16", 3.8, unit="s", source="arXiv:2411.01783 abstract: 128K context prefill in 3.8s")
attn_factor = given("attn_flop_factor", 4, source="attention FLOPs per query-key pair per head dim: QK^T and PV, "
                     "2 FLOPs per multiply-add each")
fp8_tflops = fact("h100_sxm.fp8_dense", "fp8_tflops")
causal = given("causal_fraction", 0.5, source="causal mask: a load-balanced ring step computes half a full block")

# %% [markdown]
# ## Prefill FLOPs: linear layers and attention

# %%
per_layer = hidden * q_heads * head_dim * 2 + 2 * hidden * kv_heads * head_dim + 3 * hidden * inter + 2 * hidden
params = 2 * vocab * hidden + layers * per_layer + hidden
# the embedding is a lookup and the LM head runs only for the last position, so neither costs per-token GEMM FLOPs
linear_flops = claim("linear_flops", 2 * (params - 2 * vocab * hidden) * prompt, unit="FLOP")
attn_flops = claim("attention_flops", layers * attn_factor * prompt**2 * q_heads * head_dim * causal, unit="FLOP")
total = linear_flops + attn_flops
claim("attention_share", attn_flops / total, unit="fraction")
one_node = claim("one_node_time", total / (node * bf16_tflops * 1e12 * mfu), unit="s")
gpus = nodes * node
cp_ideal = claim("cp16_time", total / (gpus * bf16_tflops * 1e12 * mfu), unit="s")
check(abs(one_node / paper_128k_1node - 1) < 0.5, "the model is within 50% of the paper's single-host 60 s")
claim("paper_over_model", paper_128k_1node / one_node, unit="x")
claim("paper_cp_speedup", paper_128k_1node / paper_128k_cp, unit="x")
# the alternative: stretch TP across the nodes. One all-reduce of the whole prompt's activations per half-layer.
tp_ar_bytes = claim("tp_allreduce_bytes", prompt * hidden * bf16, unit="B")

# %% [markdown]
# ## One ring step, per GPU: bytes out against attention work

# %%
chunk = claim("chunk_tokens", prompt / nodes, unit="tokens")
kv_heads_gpu = claim("kv_heads_per_gpu", kv_heads / node, unit="heads")
claim("ring_steps", nodes - 1, unit="steps")
q_heads_gpu = claim("q_heads_per_gpu", q_heads / node, unit="heads")
kv_bytes_tok = claim("kv_bytes_per_token_gpu", 2 * kv_heads_gpu * head_dim * bf16, unit="B")  # K and V of one head
q_bytes_tok = claim("q_bytes_per_token_gpu", q_heads_gpu * head_dim * bf16, unit="B")
send = claim("ring_step_bytes", chunk * kv_bytes_tok, unit="B")
nic_bw = claim("nic_per_direction", nic / 8, unit="GB/s")
t_send = claim("ring_step_send", send / (nic_bw * 1e9), unit="s")
step_flops = attn_factor * chunk**2 * q_heads_gpu * head_dim * causal
t_attn = claim("ring_step_attention", step_flops / (bf16_tflops * 1e12 * mfu), unit="s")
claim("overlap_margin", t_attn / t_send, unit="x")
check(t_send < t_attn, "at 16 nodes the KV hand-off hides under the attention it feeds")
# overlap holds while chunk * kv_bytes / B <= 4 chunk^2 qh d causal / F  =>  chunk >= kv_bytes F / (4 qh d causal B)
min_chunk = claim("min_chunk_tokens", kv_bytes_tok * bf16_tflops * 1e12 * mfu / (attn_factor * q_heads_gpu * head_dim * causal * nic_bw * 1e9), unit="tokens")
max_nodes = claim("max_nodes_hidden", prompt / min_chunk, unit="nodes")
nvlink_dir = given("nvlink_per_direction", 450, unit="GB/s", source="H100 NVLink 900 GB/s bidirectional (facts file), "
                   "half per direction")
min_chunk_nvl = claim("min_chunk_tokens_nvlink", min_chunk * nic_bw / nvlink_dir, unit="tokens")

# %% [markdown]
# ## Pass-KV or pass-Q: a follow-up turn with the prompt already cached
# New tokens n on top of T cached. Pass-KV circulates every rank's KV, (T + n)/N tokens each; pass-Q circulates
# the n/N new queries and must return the partial outputs (same size as Q) to their owners.

# %%
new = given("new_tokens", 4096, unit="tokens", source="the question's hypothetical follow-up turn")
pass_kv = claim("pass_kv_bytes", (prompt + new) / nodes * kv_bytes_tok, unit="B")
q_and_out = given("q_and_output", 2, source="pass-Q sends each query block around the ring and returns its partial "
                  "output (same shape as Q) to the owner")
pass_q = claim("pass_q_bytes", new / nodes * q_and_out * q_bytes_tok, unit="B")
claim("pass_kv_over_pass_q", pass_kv / pass_q, unit="x")
threshold = claim("pass_q_threshold", kv_bytes_tok / (q_and_out * q_bytes_tok), unit="fraction")  # new/(T+new) below this: pass-Q
claim("followup_new_fraction", new / (prompt + new), unit="fraction")
check(new / (prompt + new) < threshold, "a 4K follow-up on a cached 128K prompt should pass Q")
claim("q_over_kv_bytes", q_bytes_tok / kv_bytes_tok, unit="x")
kv_tok_model = claim("kv_bytes_per_token", 2 * layers * kv_heads * head_dim * bf16, unit="B")
claim("kv_total_prompt", prompt * kv_tok_model, unit="B")
claim("fp8_over_bf16", fp8_tflops / bf16_tflops, unit="x")
print(f"total {total:.3e} FLOP, attn share {attn_flops/total:.1%}, one node {one_node:.1f} s, CP16 {cp_ideal:.2f} s")
print(f"chunk {chunk}, send {send/2**20:.1f} MiB in {t_send*1e3:.2f} ms vs attn {t_attn*1e3:.2f} ms; min chunk {min_chunk:.0f}")
given("ways_to_scale", 3, source="the answer's enumeration: tensor, pipeline and context parallelism")
given("prompt_sweep_max", 8, unit="x", source="the question's suggested measurement sweep: 32K to 1M tokens, the paper's range")
given("prompt_sweep_min", 0.25, unit="x", source="the question's suggested measurement sweep: 32K of 128K tokens")
given("allreduces_per_layer", 2, source="Megatron-LM tensor parallelism (arXiv:1909.08053 §3): one after attention, one after the MLP")
