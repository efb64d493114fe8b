# %% [markdown]
# # Long replies: batch size, preemption price, per-user speed
# Llama-3.1-70B in bf16 with TP=8 on one HGX H100 (config and GPU figures from the fact base; vLLM's
# 0.92 memory fraction, v0.21+). The per-GPU runtime reserve, prefill MFU and the workload are stated
# assumptions. Decode steps are bandwidth-bound: each reads the weights plus all live KV once.
# Steady state: with arrivals spread in time and a fixed reply length, live requests' ages are uniform,
# so the mean live footprint is prompt + reply/2.

# %%
from qbank.verify import check, claim, fact, given

layers = fact("llama3_1_70b.num_hidden_layers", "layers")
d = fact("llama3_1_70b.hidden_size", "d_model")
nq = fact("llama3_1_70b.num_attention_heads", "q_heads")
nkv = fact("llama3_1_70b.num_key_value_heads", "kv_heads")
hd = fact("llama3_1_70b.head_dim", "head_dim")
ffn = fact("llama3_1_70b.intermediate_size", "ffn_dim")
vocab = fact("llama3_1_70b.vocab_size", "vocab")
gpus = fact("h100_sxm.nvlink_domain", "gpus")
hbm = fact("h100_sxm.hbm_capacity", "hbm_gb")
cuda_total = fact("h100_sxm.cuda_total_memory", "cuda_total_bytes")  # what vLLM multiplies util by
bw = fact("h100_sxm.hbm_bandwidth", "h100_bw")
peak = fact("h100_sxm.bf16_dense", "h100_bf16")
util = fact("vllm.gpu_memory_utilization_default", "util")
pcie = fact("networking.pcie_gen5_x16", "pcie_per_direction")
reserve = given("reserve_per_gpu", 3e9, unit="B", source="assumed activation + CUDA context + graph reserve per GPU")
mfu = given("prefill_mfu", 0.5, unit="fraction", source="assumed prefill MFU for a 6K-token recompute")
prompt = given("prompt_tokens", 200, unit="tokens", source="workload assumption: short prompts")
reply = given("reply_tokens", 8192, unit="tokens", source="workload assumption: replies run to 8,192 tokens")
victim = given("victim_tokens", 6144, unit="tokens", source="example preemption victim with 6K tokens of context")
slo = given("per_user_slo", 60, unit="tokens/s", source="example per-user decode speed target")

# %%
params = layers * (2 * d * nq * hd + 2 * d * nkv * hd + 3 * d * ffn + 2 * d) + 2 * vocab * d + d
weights = claim("weights_bf16", params * 2, unit="B")
kv_tok = claim("kv_bytes_per_token", 2 * layers * nkv * hd * 2, unit="B")
pool = claim("kv_pool", gpus * (cuda_total * util - weights / gpus - reserve), unit="B")
pool_tok = claim("pool_tokens", pool / kv_tok, unit="tokens")
pool_tok_label = claim("pool_tokens_if_label", gpus * (hbm * 1e9 * util - weights / gpus - reserve) / kv_tok, unit="tokens")
agg_bw = gpus * bw * 1e12

# %% [markdown]
# ## Three ways to size the batch

# %%
naive = claim("batch_by_prompt", pool_tok // prompt, unit="requests")
safe = claim("batch_worst_case", pool_tok // (prompt + reply), unit="requests")
age_mean = given("mean_age_fraction", 0.5, unit="fraction", source="uniform ages over a reply: mean age is half "
    "the reply length")
mean_live = claim("mean_live_tokens", prompt + reply * age_mean, unit="tokens")
steady = claim("batch_steady", pool_tok // mean_live, unit="requests")
final_tokens = claim("final_tokens", prompt + reply, unit="tokens")
stranded = claim("worst_case_stranded", 1 - mean_live / (prompt + reply), unit="fraction")
steady_over_safe = claim("steady_over_safe", steady / safe, unit="x")
growth_ratio = claim("growth_factor", (prompt + reply) / prompt, unit="x")


def step(batch: float) -> float:
    """Decode step time: weights plus the batch's mean live KV, read once."""
    return (weights + batch * mean_live * kv_tok) / agg_bw


for name, b in (("safe", safe), ("steady", steady)):
    t = claim(f"step_{name}", step(b), unit="s")
    claim(f"user_tps_{name}", 1 / t, unit="tokens/s")
    claim(f"throughput_{name}", b / t, unit="tokens/s")
    claim(f"reply_time_{name}", reply * t, unit="s")
slo_step = claim("slo_step", 1 / slo, unit="s")
slo_batch = claim("batch_for_slo", int((agg_bw / slo - weights) / (mean_live * kv_tok)), unit="requests")
tp_gain = claim("throughput_gain_steady_vs_safe", (steady / step(steady)) / (safe / step(safe)), unit="x")
speed_loss = claim("user_speed_loss_steady_vs_safe", 1 - step(safe) / step(steady), unit="fraction")
check(safe < slo_batch < steady, "the SLO batch sits between the worst-case and steady-state sizes")

# %% [markdown]
# ## Pricing a preemption of a 6,144-token victim
# Recompute: a prefill of the victim's whole context (prompt + generated tokens), linear + causal attention
# FLOPs. Swap: its KV out to host and back over PCIe Gen5 x16, each GPU moving its 1/8 shard in parallel.

# %%
flops = 2 * params * victim + 2 * layers * d * victim**2
recompute = claim("recompute_time", flops / (gpus * peak * 1e12 * mfu), unit="s")
victim_kv = claim("victim_kv", victim * kv_tok, unit="B")
swap_one_way = claim("swap_time_one_way", victim_kv / gpus / (pcie * 1e9), unit="s")
ratio = claim("recompute_over_swap_round_trip", recompute / (2 * swap_one_way), unit="x")
print(pool / 1e9, pool_tok, naive, safe, steady, slo_batch)
print(step(safe) * 1e3, 1 / step(safe), safe / step(safe), step(steady) * 1e3, 1 / step(steady), steady / step(steady))
print(recompute, victim_kv / 1e9, swap_one_way * 1e3, ratio, tp_gain, speed_loss)
