# %% [markdown]
# # The memory budget around weights and KV: Llama-3.1-8B on an H100
# Inputs: Llama-3.1-8B's config (Meta's `sku_list.py`, via the project's facts file), the H100 SXM's memory,
# and vLLM's profiling rule read from `vllm/v1/worker/gpu_worker.py`. vLLM requests `gpu_memory_utilization`
# × the total that `torch.cuda.mem_get_info()` (cudaMemGetInfo) reports: 79.18 GiB = 85.02 GB on an H100 80GB,
# not the marketed 80e9 B (determine_available_memory @0012cf69). The version matters: 0.92 by default from v0.21 and 0.9 in every earlier release;
# v0.21 also began estimating the CUDA-graph pool before sizing the cache. We compute both.

# %%
from qbank.verify import check, claim, fact, given

layers = fact("llama3_1_8b.num_hidden_layers", "layers")
hidden = fact("llama3_1_8b.hidden_size", "hidden")
q_heads = fact("llama3_1_8b.num_attention_heads", "q_heads")
kv_heads = fact("llama3_1_8b.num_key_value_heads", "kv_heads")
head_dim = fact("llama3_1_8b.head_dim", "head_dim")
inter = fact("llama3_1_8b.intermediate_size", "intermediate")
vocab = fact("llama3_1_8b.vocab_size", "vocab")
hbm = fact("h100_sxm.hbm_capacity", "hbm_gb")  # 80 GB as marketed
cuda_total = fact("h100_sxm.cuda_total_memory", "cuda_total_bytes")  # what vLLM multiplies util by
util_new = fact("vllm.gpu_memory_utilization_default", "util_v021")  # 0.92 from v0.21
util_old = given(
    "util_before_v021",
    0.9,
    unit="fraction",
    source="vLLM docs v0.6.4 and PR #2162: 'default value of 0.9' (all releases before v0.21)",
)
bf16 = given("bf16_bytes", 2, unit="B", source="bf16 is 2 bytes")
fp32 = given("fp32_bytes", 4, unit="B", source="fp32 is 4 bytes; vLLM computes logits in fp32")

# %% [markdown]
# ## Weights, counted from the config (untied embedding and LM head, as in the 8B checkpoint)

# %%
per_layer = (
    hidden * q_heads * head_dim
    + 2 * hidden * kv_heads * head_dim
    + q_heads * head_dim * hidden
    + 3 * hidden * inter
    + 2 * hidden
)
params = claim("params", 2 * vocab * hidden + layers * per_layer + hidden, unit="params")
check(abs(params - 8.03e9) < 0.01e9, "Llama-3.1-8B has 8.03B parameters")
weights = claim("weights_bytes", params * bf16, unit="B")
print(f"weights {weights / 1e9:.2f} GB")

# %%
total_gb = claim("cuda_total_gb", cuda_total / 1e9, unit="GB")
total_gib = claim("cuda_total_gib", cuda_total / 2**30, unit="GiB")
requested_new = claim("requested_v021", total_gb * util_new, unit="GB")
requested_old = claim("requested_old", total_gb * util_old, unit="GB")
outside_new = claim("outside_budget_v021", total_gb - requested_new, unit="GB")
outside_old = claim("outside_budget_old", total_gb - requested_old, unit="GB")
naive_new = claim("requested_if_80e9", hbm * util_new, unit="GB")  # the figure a reader computes from the label
under_count = claim("requested_undercount_if_80e9", requested_new - naive_new, unit="GB")
check(requested_new > hbm * util_new, "the request is larger than 0.92 x 80e9 B: vLLM starts from cudaMemGetInfo's total")

# %% [markdown]
# ## Activations at the profile run
# The profile runs a dummy batch of `max_num_batched_tokens` tokens; we set it to 8192 explicitly because its
# default moved between versions and entry points. The largest live tensors are the MLP's gate/up output and its
# activated half. The sampler's dummy run adds fp32 logits for `max_num_seqs` rows (256, also set explicitly).

# %%
batched = given(
    "max_num_batched_tokens",
    8192,
    unit="tokens",
    source="set explicitly in this example (--max-num-batched-tokens 8192)",
)
seqs = given("max_num_seqs", 256, unit="requests", source="set explicitly in this example (--max-num-seqs 256)")
mlp_live = claim("mlp_live_bytes", batched * (2 * inter + inter) * bf16, unit="B")
sampler_logits = claim("sampler_logits_bytes", seqs * vocab * fp32, unit="B")
act = claim("activation_estimate", mlp_live + sampler_logits, unit="B")
print(f"mlp {mlp_live / 1e9:.2f} GB, sampler {sampler_logits / 1e9:.2f} GB, act {act / 1e9:.2f} GB")

# %% [markdown]
# ## KV per token and what a GiB of misjudged memory costs

# %%
kv_tok = claim("kv_bytes_per_token", 2 * layers * kv_heads * head_dim * bf16, unit="B")
check(kv_tok == 128 * 1024, "128 KiB per token")
tokens_per_gib = claim("tokens_per_gib", 2**30 / kv_tok, unit="tokens")
check(tokens_per_gib == 8192, "a GiB of memory is 8192 tokens of KV")
kv_new = claim("kv_budget_v021_before_nontorch", requested_new * 1e9 - weights - act, unit="B")
kv_old = claim("kv_budget_old_before_nontorch", requested_old * 1e9 - weights - act, unit="B")
tok_new = claim("kv_tokens_v021_ceiling", kv_new / kv_tok, unit="tokens")
tok_old = claim("kv_tokens_old_ceiling", kv_old / kv_tok, unit="tokens")
claim("undercount_tokens", under_count * 1e9 / kv_tok, unit="tokens")
check(tok_new > tok_old, "0.92 leaves more KV than 0.9 before non-torch memory and graphs are subtracted")
print(
    f"KV budget {kv_new / 1e9:.1f} GB -> {tok_new:,.0f} tokens (v0.21); {kv_old / 1e9:.1f} GB -> {tok_old:,.0f} (older)"
)

# %% [markdown]
# ## The request the profile never saw: prompt logprobs
# Asking for `prompt_logprobs` makes the engine keep full-vocabulary fp32 logits for every prompt token in the
# step, not just the last one. At a full 8192-token step that is a tensor the dummy run did not allocate.

# %%
prompt_lp = claim("prompt_logprobs_bytes", batched * vocab * fp32, unit="B")
ratio = claim("prompt_logprobs_vs_sampler", prompt_lp / sampler_logits, unit="x")
check(prompt_lp > act, "prompt logprobs at a full step exceed the whole activation estimate")
print(f"prompt logprobs {prompt_lp / 1e9:.2f} GB = {ratio:.0f}x the sampler's dummy logits")
