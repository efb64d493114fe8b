# %% [markdown]
# # Static against continuous batching: the slot-steps, the throughput and the wait
# Static batching admits B requests, runs until the longest finishes, then admits the next B.
# Continuous (iteration-level) batching, introduced by Orca (Yu et al., OSDI 2022), refills a slot
# the step after its request finishes. Output lengths here are the question's hypothetical: uniform
# on 1..1024 tokens. The decode step is priced on a derated memory roofline for Llama-3.1-8B on an
# H100: weights once per step plus the KV of every live sequence.

# %%
import random

from qbank.verify import check, claim, fact, given

slots = int(given("batch_slots", 64, unit="sequences", source="the question's hypothetical batch size"))
max_out = int(given("max_output_tokens", 1024, unit="tokens", source="the question's hypothetical: outputs uniform on 1..1024"))
n_req = int(given("requests_simulated", 4096, unit="requests", source="simulation length: 64 static batches"))
prompt = given("prompt_tokens", 512, unit="tokens", source="the question's hypothetical prompt length")
params = given("params_8b", 8.03e9, unit="params", source="Llama-3.1-8B count from its config (memory-budget script)")
bf16 = given("bf16_bytes", 2, unit="B", source="bf16 stores 2 bytes per value")
kv_tok = fact("derived.kv_bytes_per_token_llama31_8b_bf16", "kv_bytes_per_token")
bw = fact("h100_sxm.hbm_bandwidth", "h100_bw") * 1e12
eta = given("mem_efficiency", 0.8, unit="fraction",
            source="the question's hypothetical: achieved fraction of peak HBM bandwidth in a decode step")
flops = fact("h100_sxm.bf16_dense", "h100_bf16") * 1e12
eta_f = given("flop_efficiency", 0.6, unit="fraction",
              source="the question's hypothetical: achieved fraction of peak bf16 FLOP/s in prefill GEMMs")
layers = fact("llama3_1_8b.num_hidden_layers", "layers")
hidden = fact("llama3_1_8b.hidden_size", "hidden_size")
weights = claim("weights_bytes", params * bf16, unit="B")
total_mem = fact("h100_sxm.cuda_total_memory", "cuda_total_memory")
util = fact("vllm.gpu_memory_utilization_default", "gpu_memory_utilization")
worst_kv = claim("kv_bytes_full_batch", slots * (prompt + max_out) * kv_tok, unit="B")
check(weights + worst_kv <= total_mem * util, "64 sequences at their longest fit beside the weights")

# %% [markdown]
# ## Expected length against expected longest
# With B i.i.d. lengths uniform on 1..L, E[max] = L - sum_{k<L} (k/L)^B. Every static batch lasts
# E[max] steps and its slots hold real work for E[len] of them.

# %%
mean_len = claim("mean_output_tokens", (max_out + 1) / 2, unit="tokens")
e_max = claim("expected_longest_tokens", max_out - sum((k / max_out) ** slots for k in range(1, max_out)), unit="tokens")
slot_util = claim("static_slot_utilization", mean_len / e_max, unit="fraction")
claim("static_idle_slot_fraction", 1 - slot_util, unit="fraction")
claim("slot_ratio", e_max / mean_len, unit="x")

# %% [markdown]
# ## Simulated throughput on the roofline, prefills included
# Same 4,096 requests both ways, and both prefill every prompt. A step is priced kernel by kernel: the
# GEMMs (one weight read, 2 FLOPs per parameter per token: max of the two), then attention (the live
# sequences' KV read, plus each prefilled prompt's causal attention FLOPs). A finished row in a static
# batch stops reading KV but the step still reads every weight, so static steps get cheaper as the batch
# drains: the throughput gap is smaller than the slot gap. Static prefills a whole batch in one step;
# continuous prefills each replacement in the step after its slot frees (no chunking).

# %%
rng = random.Random(7)
lens = [rng.randint(1, max_out) for _ in range(n_req)]
prompt_attn_s = 4 * layers * hidden * prompt * (prompt + 1) / 2 / (flops * eta_f)


def step_s(live_ctx_tokens: float, live: int = 0, joins: int = 0) -> float:
    """live sequences decoding over live_ctx_tokens of KV, plus joins prompts prefilled in the same step."""
    gemm = max(weights / (bw * eta), 2 * params * (live + joins * prompt) / (flops * eta_f))
    return gemm + live_ctx_tokens * kv_tok / (bw * eta) + joins * prompt_attn_s


def run_static() -> tuple[float, int, int]:
    t, toks, slot_steps = 0.0, 0, 0
    for i in range(0, n_req, slots):
        batch = lens[i:i + slots]
        longest = max(batch)
        t += step_s(0, 0, len(batch))
        for s in range(1, longest + 1):
            live = [x for x in batch if x >= s]
            t += step_s(len(live) * (prompt + s), len(live))
        toks += sum(batch)
        slot_steps += slots * longest
    return t, toks, slot_steps


def run_continuous() -> tuple[float, int]:
    rem, age, nxt, t, toks = lens[:slots], [0] * slots, slots, 0.0, 0
    joins = slots
    while True:
        live = [j for j in range(slots) if rem[j] > 0]
        if not live:
            return t, toks
        t += step_s(sum(prompt + age[j] + 1 for j in live), len(live), joins)
        joins = 0
        for j in live:
            rem[j] -= 1
            age[j] += 1
            toks += 1
            if rem[j] == 0 and nxt < n_req:
                rem[j], age[j], nxt, joins = lens[nxt], 0, nxt + 1, joins + 1


t_st, tok_st, ss = run_static()
t_co, tok_co = run_continuous()
check(tok_st == tok_co == sum(lens), "both runs generate the same tokens")
thr_st = claim("static_tokens_per_s", tok_st / t_st, unit="tokens/s")
thr_co = claim("continuous_tokens_per_s", tok_co / t_co, unit="tokens/s")
gain = claim("throughput_gain", thr_co / thr_st, unit="x")
claim("simulated_slot_utilization", tok_st / ss, unit="fraction")
claim("static_step_ms_full", step_s(slots * (prompt + 1), slots) * 1e3, unit="ms")
claim("weight_share_full_step", weights / (weights + slots * (prompt + 1) * kv_tok), unit="fraction")
check(1 < gain < e_max / mean_len, "continuous wins, by less than the slot ratio")
print(f"static {thr_st:.0f} tok/s, continuous {thr_co:.0f} tok/s, gain {gain:.2f}x, slot util {tok_st / ss:.3f}")

# %% [markdown]
# ## What a short request waits for
# Under static batching a 50-token reply is returned when its batch ends (E[max] steps); a request
# arriving mid-batch also waits for the batch in flight, on average half of it.

# %%
short = given("short_reply_tokens", 50, unit="tokens", source="example short reply")
claim("short_reply_static_steps", e_max, unit="steps")
claim("short_reply_continuous_steps", short, unit="steps")
claim("short_reply_slowdown", e_max / short, unit="x")
claim("mean_admission_wait_steps", e_max / 2, unit="steps")

# %% [markdown]
# ## The price: joining prefills land in the decode stream
# In steady state one request finishes every mean_len / B steps, and its replacement's prompt is
# prefilled in that step (without chunked prefill). Prefill priced at a derated bf16 rate.

# %%
claim("steps_between_joins", mean_len / slots, unit="steps")
t_pf = claim("prefill_ms_joining", 2 * params * prompt / (flops * eta_f) * 1e3, unit="ms")
claim("static_batch_prefill_s", step_s(0, 0, slots), unit="s")
# a live request's age is length-biased: sum_L L(L-1)/2 / sum_L L over the uniform lengths
age = claim("mean_live_age_tokens",
            sum(n * (n - 1) / 2 for n in range(1, max_out + 1)) / sum(range(1, max_out + 1)), unit="tokens")
claim("naive_mean_age_tokens", mean_len / 2, unit="tokens")
t_dec = claim("decode_step_ms_steady", step_s(slots * (prompt + age), slots) * 1e3, unit="ms")
t_join = claim("joining_step_ms", step_s(slots * (prompt + age), slots, 1) * 1e3, unit="ms")
claim("joining_over_decode_step", t_join / t_dec, unit="x")
