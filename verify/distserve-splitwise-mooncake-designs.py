# %% [markdown]
# # DistServe, Splitwise, Mooncake: what each design optimises, in numbers
# Headline results are quoted from each paper's abstract (inputs, not re-derived). The illustrations are
# computed here: decode on an H200 against an H100 (Splitwise's heterogeneous idea on current parts),
# and what a KV-cache hit rate does to prefill capacity (Mooncake's KVCache-centric idea).

# %%
from qbank.verify import check, claim, fact, given

ds_rate = given("distserve_more_requests", 7.4, unit="x",
                source="DistServe (Zhong et al., OSDI 2024), abstract of the published paper, "
                "usenix.org/conference/osdi24/presentation/zhong-yinmin: '7.4x more requests or 12.6x tighter SLO' "
                "(the arXiv v1 preprint, also on the first author's page, said 4.48x and 10.2x)")
ds_slo = given("distserve_tighter_slo", 12.6, unit="x", source="same abstract")
ds_att = given("distserve_attainment", 0.9, unit="fraction", source="same abstract: 'within latency constraints for > 90% of requests'")
sw_thr = given("splitwise_throughput", 1.4, unit="x",
               source="Splitwise (Patel et al., ISCA 2024, arXiv:2311.18677), abstract: 'up to 1.4x higher throughput at 20% lower cost'")
sw_cost = given("splitwise_cost_saving", 0.2, unit="fraction", source="same abstract")
sw_iso = given("splitwise_iso_power_cost", 2.35, unit="x",
               source="same abstract: '2.35x more throughput under the same power and cost budgets'")
mc_sim = given("mooncake_sim_increase", 5.25, unit="fraction",
               source="Mooncake (Qin et al., arXiv:2407.00079), abstract: 'up to a 525% increase in throughput in certain simulated scenarios'")
mc_real = given("mooncake_real_more_requests", 0.75, unit="fraction",
                source="same abstract: 'enables Kimi to handle 75% more requests'")

# %% [markdown]
# ## Splitwise's idea on current parts: which GPU should decode
# Same bf16 tensor rate, more and faster HBM: a memory-bound decode step speeds up by the bandwidth
# ratio, a compute-bound prefill not at all.

# %%
h100_bw = fact("h100_sxm.hbm_bandwidth", "h100_bw")
h200_bw = fact("h200_sxm.hbm_bandwidth", "h200_bw")
h100_f = fact("h100_sxm.bf16_dense", "h100_bf16")
h200_f = fact("h200_sxm.bf16_dense", "h200_bf16")
h100_mem = fact("h100_sxm.cuda_total_memory", "h100_total")
h200_mem = fact("h200_sxm.cuda_total_memory", "h200_total")
util = fact("vllm.gpu_memory_utilization_default", "gpu_memory_utilization")
params = given("params_70b", 70.55e9, unit="params", source="Llama-3.1-70B count from its config (recompute-vs-fetch script)")
bf16 = given("bf16_bytes", 2, unit="B", source="bf16 stores 2 bytes per value")
kv_tok = fact("derived.kv_bytes_per_token_llama31_70b_bf16", "kv_bytes_per_token")
tp = given("tp_gpus", 8, unit="GPUs", source="example: one 8-GPU node at TP8")
reserve = given("runtime_reserve", 3e9, unit="B", source="the question's hypothetical: runtime memory per GPU")
claim("decode_speedup_h200", h200_bw / h100_bw, unit="x")
claim("prefill_speedup_h200", h200_f / h100_f, unit="x")
check(h200_f == h100_f, "same dense bf16 rate: prefill gains nothing")
pool_h100 = claim("kv_tokens_h100_node", tp * (h100_mem * util - reserve - params * bf16 / tp) / kv_tok, unit="tokens")
pool_h200 = claim("kv_tokens_h200_node", tp * (h200_mem * util - reserve - params * bf16 / tp) / kv_tok, unit="tokens")
claim("kv_capacity_ratio", pool_h200 / pool_h100, unit="x")

# %% [markdown]
# ## Mooncake's idea: a KV-cache hit is prefill you do not run
# With a hit rate h on prompt tokens, a prefill pool serves 1/(1-h) times the input tokens. Example hit
# rate: DeepSeek's published day (open-infra-index day 6: 342B of 608B input tokens hit its on-disk cache).

# %%
hit = given("example_hit_rate", 342 / 608, unit="fraction",
            source="github:deepseek-ai/open-infra-index 202502OpenSourceWeek/day_6_one_more_thing_deepseekV3R1_"
            "inference_system_overview.md: 342B of 608B input tokens hit the on-disk KV cache")
claim("prefill_capacity_factor", 1 / (1 - hit), unit="x")
for h in (0.3, 0.8):
    claim(f"prefill_capacity_factor_{int(h * 100)}", 1 / (1 - h), unit="x")
given("hit_low", 0.3, unit="fraction", source="sensitivity: a low hit rate")
given("hit_high", 0.8, unit="fraction", source="sensitivity: a high hit rate (long shared contexts)")
