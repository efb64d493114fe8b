# %% [markdown]
# # Priority scheduling on a shared node: what a burst of interactive traffic costs the batch tier
# Llama-3.1-70B (bf16) at TP8 on one 8-GPU H100 node under vLLM V1 with --scheduling-policy priority:
# the waiting queue is ordered by (priority, arrival_time) and, when a running request cannot get
# blocks, the victim is max(running, key=(priority, arrival_time)); V1 preempts by recompute (the
# victim's blocks are freed and its computed tokens reset). Source: github:vllm-project/vllm
# vllm/v1/core/sched/scheduler.py Scheduler.schedule @b4622cf9. The workload is the question's
# hypothetical; prefill is priced at a derated bf16 rate.

# %%
from qbank.verify import check, claim, fact, given

params = given("params_70b", 70.55e9, unit="params", source="Llama-3.1-70B count from its config (recompute-vs-fetch script)")
kv_tok = fact("derived.kv_bytes_per_token_llama31_70b_bf16", "kv_bytes_per_token")
bf16 = given("bf16_bytes", 2, unit="B", source="bf16 stores 2 bytes per value")
given("flop_factor", 2, source="2 FLOPs per multiply-add (the concept pages' formulas)")
gpus = given("tp_gpus", 8, unit="GPUs", source="example: one 8-GPU HGX H100 node at TP8")
flops = fact("h100_sxm.bf16_dense", "h100_bf16") * 1e12
eta_f = given("flop_efficiency", 0.6, unit="fraction", source="the question's hypothetical: achieved share of bf16 FLOP/s in prefill")
total_mem = fact("h100_sxm.cuda_total_memory", "cuda_total_memory")
util = fact("vllm.gpu_memory_utilization_default", "gpu_memory_utilization")
reserve = given("runtime_reserve", 3e9, unit="B",
                source="the question's hypothetical: activation peak, non-torch memory and graph pool per GPU")
pool = claim("kv_pool_bytes", gpus * (total_mem * util - reserve) - params * bf16, unit="B")
pool_tok = claim("kv_pool_tokens", pool / kv_tok, unit="tokens")

i_prompt = given("interactive_prompt", 2000, unit="tokens", source="the question's hypothetical interactive prompt")
i_out = given("interactive_output", 300, unit="tokens", source="the question's hypothetical interactive reply")
i_live = given("interactive_live", 100, unit="requests", source="the question's hypothetical steady interactive load")
b_prompt = given("batch_prompt", 1000, unit="tokens", source="the question's hypothetical batch-job prompt")
b_out = given("batch_output", 4000, unit="tokens", source="the question's hypothetical batch-job output")
burst = given("burst_requests", 200, unit="requests", source="the question's hypothetical burst of interactive arrivals")

i_foot = i_prompt + i_out / 2
i_steady = claim("interactive_steady_tokens", i_live * i_foot, unit="tokens")
b_mean = claim("batch_mean_footprint", b_prompt + b_out / 2, unit="tokens")
b_live = int((pool_tok - i_steady) // b_mean)
claim("batch_live", b_live, unit="requests")

# %% [markdown]
# ## The burst: the victims and the recompute
# The burst needs each new request's prompt plus its first blocks; the batch requests' ages are spread
# evenly over their replies; the priority rule takes the latest-arriving (youngest) batch requests first.

# %%
need = claim("burst_tokens", burst * (i_prompt + i_out), unit="tokens")
free_now = pool_tok - i_steady - b_live * b_mean
ages = sorted((b_out * (j + 0.5) / b_live for j in range(b_live)))  # youngest first
freed, victims = free_now, 0
for a in ages:
    if freed >= need:
        break
    freed += b_prompt + a
    victims += 1
claim("victims", victims, unit="requests")
claim("victim_share", victims / b_live, unit="fraction")
recomputed = claim("recompute_tokens", freed - free_now, unit="tokens")
t_tok = 2 * params / (gpus * flops * eta_f)
claim("prefill_us_per_token", t_tok * 1e6, unit="us")
t_recompute = claim("recompute_s", recomputed * t_tok, unit="s")
t_burst = claim("burst_prefill_s", burst * i_prompt * t_tok, unit="s")
claim("recompute_over_burst", t_recompute / t_burst, unit="x")
check(t_recompute > t_burst, "re-prefilling the victims costs more node time than the burst's own prefill")

# %% [markdown]
# ## Oldest-first would free the same tokens with fewer victims, and lose the same compute
# Recompute re-prefills prompt + generated tokens, i.e. exactly the tokens freed, whoever the victim.

# %%
freed_o, victims_o = free_now, 0
for a in reversed(ages):
    if freed_o >= need:
        break
    freed_o += b_prompt + a
    victims_o += 1
claim("victims_oldest_first", victims_o, unit="requests")
claim("recompute_s_oldest_first", (freed_o - free_now) * t_tok, unit="s")
check(abs((freed_o - free_now) - (freed - free_now)) / need < 0.05, "the recompute is the tokens freed, to within 5%")

# %% [markdown]
# ## The alternative: a reserved headroom for bursts

# %%
b_live_reserved = int((pool_tok - i_steady - need) // b_mean)
claim("batch_live_with_headroom", b_live_reserved, unit="requests")
claim("batch_capacity_loss", 1 - b_live_reserved / b_live, unit="fraction")
claim("headroom_share_of_pool", need / pool_tok, unit="fraction")
