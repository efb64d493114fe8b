# %% [markdown]
# # DeepSeek-V3/R1's published serving day: the prefill:decode split, re-derived
# Inputs from DeepSeek's inference-system overview (github:deepseek-ai/open-infra-index
# 202502OpenSourceWeek/day_6_one_more_thing_deepseekV3R1_inference_system_overview.md, "Statistics of
# DeepSeek's Online Service" and "Large-scale Cross-node Expert Parallelism"): one day of V3 and R1
# traffic on H800 nodes of 8 GPUs, and the per-node throughput of each phase. Model shape from the
# DeepSeek-V3 config (facts.yaml).

# %%
from qbank.verify import check, claim, fact, given

DAY6 = ("github:deepseek-ai/open-infra-index 202502OpenSourceWeek/"
        "day_6_one_more_thing_deepseekV3R1_inference_system_overview.md")
inp = given("input_tokens_day", 608e9, unit="tokens", source=DAY6 + ": 'Total input tokens: 608B'")
hit = given("input_cache_hit_tokens", 342e9, unit="tokens", source=DAY6 + ": '342B tokens (56.3%) hit the on-disk KV cache'")
outp = given("output_tokens_day", 168e9, unit="tokens", source=DAY6 + ": 'Total output tokens: 168B'")
pf_rate = given("prefill_tokens_per_node_s", 73.7e3, unit="tokens/s",
                source=DAY6 + ": '~73.7k tokens/s input (including cache hits) during prefilling' per H800 node")
dc_rate = given("decode_tokens_per_node_s", 14.8e3, unit="tokens/s",
                source=DAY6 + ": '~14.8k tokens/s output during decoding' per H800 node")
avg_nodes = given("reported_avg_nodes", 226.75, unit="nodes", source=DAY6 + ": 'average occupancy of 226.75 nodes'")
peak_nodes = given("reported_peak_nodes", 278, unit="nodes", source=DAY6 + ": 'peak node occupancy ... reached 278'")
gpn = given("gpus_per_node", 8, unit="GPUs", source=DAY6 + ": 'each node contains 8 H800 GPUs'")
speed_lo = given("user_speed_low", 20, unit="tokens/s", source=DAY6 + ": 'average output speed was 20-22 tokens per second'")
speed_hi = given("user_speed_high", 22, unit="tokens/s", source=DAY6 + ": same sentence, upper end")
kv_len = given("avg_kv_len_per_output_token", 4989, unit="tokens",
               source=DAY6 + ": 'the average kvcache length per output token was 4,989 tokens'")
day = given("seconds_per_day", 86400, unit="s", source="24 h x 3600 s")

# %% [markdown]
# ## Node-seconds per phase, and the check against the reported fleet

# %%
pf_nodes = claim("prefill_nodes_avg", inp / pf_rate / day, unit="nodes")
dc_nodes = claim("decode_nodes_avg", outp / dc_rate / day, unit="nodes")
tot = claim("derived_total_nodes", pf_nodes + dc_nodes, unit="nodes")
claim("derived_vs_reported", tot / avg_nodes - 1, unit="fraction")
check(abs(tot / avg_nodes - 1) < 0.01, "the two phases' node-seconds add up to the reported average fleet within 1%")
claim("prefill_node_share", pf_nodes / tot, unit="fraction")
claim("decode_over_prefill_nodes", dc_nodes / pf_nodes, unit="x")
claim("input_over_output_tokens", inp / outp, unit="x")
claim("prefill_over_decode_rate", pf_rate / dc_rate, unit="x")
claim("hit_share", hit / inp, unit="fraction")
computed = claim("prefill_computed_tokens_per_node_s", pf_rate * (1 - hit / inp), unit="tokens/s")
claim("miss_share", 1 - hit / inp, unit="fraction")
claim("computed_over_decode", computed / dc_rate, unit="x")
claim("no_cache_factor", 1 / (1 - hit / inp), unit="x")
claim("prefill_nodes_no_cache", pf_nodes / (1 - hit / inp), unit="nodes")
claim("prefill_nodes_saved_by_cache", pf_nodes / (1 - hit / inp) - pf_nodes, unit="nodes")
check(dc_rate < computed < pf_rate, "per node, computed prefill tokens still outnumber decoded tokens")
claim("peak_over_avg", peak_nodes / avg_nodes, unit="x")

# %% [markdown]
# ## The deployment units: experts per GPU from the config

# %%
routed = fact("deepseek_v3.n_routed_experts", "routed_experts")
topk = fact("deepseek_v3.num_experts_per_tok", "experts_per_token")
redundant = given("redundant_experts", 32, unit="experts", source=DAY6 + ": '32 redundant routed experts' in both phases")
pf_gpus = given("prefill_unit_gpus", 32, unit="GPUs", source=DAY6 + ": 'Routed Expert EP32 ... spans 4 nodes'")
dc_gpus = given("decode_unit_gpus", 144, unit="GPUs", source=DAY6 + ": 'Routed Expert EP144 ... spans 18 nodes'")
pf_per_gpu = claim("prefill_experts_per_gpu", (routed + redundant) / pf_gpus, unit="experts")
dc_per_gpu = claim("decode_experts_per_gpu", (routed + redundant) / dc_gpus, unit="experts")
check(pf_per_gpu == 9 and dc_per_gpu == 2, "(256 + 32) / 32 = 9 and / 144 = 2, as the overview states")
claim("prefill_unit_nodes", pf_gpus / gpn, unit="nodes")
claim("decode_unit_nodes", dc_gpus / gpn, unit="nodes")
claim("decode_unit_over_prefill", dc_gpus / pf_gpus, unit="x")
claim("prefill_units_avg", pf_nodes / (pf_gpus / gpn), unit="instances")
claim("decode_units_avg", dc_nodes / (dc_gpus / gpn), unit="instances")

# %% [markdown]
# ## Why decode wants the larger unit: tokens per expert per step, and KV per GPU
# Concurrency per GPU from the published per-node rate and per-user speed (midpoint); every decoded
# token is routed to top-8 experts spread over the unit's 288 expert slots (load assumed balanced).

# %%
hidden = fact("deepseek_v3.hidden_size", "hidden_size")
moe_inter = fact("deepseek_v3.moe_intermediate_size", "moe_intermediate_size")
moe_layers = fact("derived.deepseek_v3_moe_layers", "moe_layers")
kv_tok = fact("derived.kv_bytes_per_token_deepseek_v3_mla_bf16", "kv_bytes_per_token")
fp8 = given("fp8_bytes", 1, unit="B", source=DAY6 + ": 'matrix multiplications ... adopt the FP8 format' (1 byte per weight)")
speed = (speed_lo + speed_hi) / 2
seqs_gpu = claim("decode_seqs_per_gpu", dc_rate / gpn / speed, unit="sequences")
tok_per_expert = claim("tokens_per_expert_slot_per_step", seqs_gpu * dc_gpus * topk / (routed + redundant), unit="tokens")
claim("tokens_per_expert_slot_ep32", seqs_gpu * pf_gpus * topk / (routed + redundant), unit="tokens")
expert_bytes = claim("expert_bytes_per_layer", 3 * hidden * moe_inter * fp8, unit="B")
claim("decode_expert_bytes_per_gpu", (dc_per_gpu + 1) * moe_layers * expert_bytes, unit="B")
claim("prefill_expert_bytes_per_gpu", (pf_per_gpu + 1) * moe_layers * expert_bytes, unit="B")
claim("flop_per_byte_expert", 2 * tok_per_expert / fp8, unit="x")
kv_gpu = claim("decode_kv_bytes_per_gpu", seqs_gpu * kv_len * kv_tok, unit="B")
claim("decode_kv_bytes_per_gpu_fp8", kv_gpu * fp8 / 2, unit="B")  # the bf16 latent (2 bytes) stored in 1 byte
print(pf_nodes, dc_nodes, tot, seqs_gpu, tok_per_expert, kv_gpu / 1e9)

# %% [markdown]
# ## For scale: the H100's FP8 ridge (the H800 is not in this script's sources)

# %%
h100_fp8 = fact("h100_sxm.fp8_dense", "h100_fp8")
h100_bw = fact("h100_sxm.hbm_bandwidth", "h100_bw")
claim("h100_fp8_ridge", h100_fp8 * 1e12 / (h100_bw * 1e12), unit="x")
