# %% [markdown]
# # Three preemption policies, priced for a 6K-token victim
# Llama-3.1-70B, TP8 on an 8-GPU H100 node, BF16 weights and KV, vLLM v0.21 default memory utilization.
# "6K" is read as 6 x 1024 = 6,144 tokens. Recompute is priced at the full dense BF16 rate (a lower bound),
# swap at the PCIe Gen5 x16 rate per GPU (63 GB/s per direction, an upper bound on what a DMA achieves).
# Engine behaviour: vLLM V1 preempts by recompute only. Its scheduler's _preempt_request
# (vllm/v1/core/sched/scheduler.py @6cf7b26b) frees the victim's blocks (kv_cache_manager.free), sets
# num_computed_tokens = 0 and prepends the request to the waiting queue; there is no swap-out path (V0's
# --swap-space CPU swap was not carried over). Swap is priced here as the alternative other engines (and V0) offer,
# or that a host-memory KV offload connector approximates on V1.

# %%
from qbank.verify import check, claim, fact, given

L = fact("llama3_1_70b.num_hidden_layers", "layers")
d = fact("llama3_1_70b.hidden_size", "hidden")
kv_tok = fact("derived.kv_bytes_per_token_llama31_70b_bf16", "kv_per_token")
F = fact("h100_sxm.bf16_dense", "h100_bf16", unit="TFLOP/s")
hbm_bw = fact("h100_sxm.hbm_bandwidth", "h100_hbm")
pcie = fact("networking.pcie_gen5_x16", "pcie", unit="GB/s")
gpus = fact("h100_sxm.nvlink_domain", "gpus")
hbm = fact("h100_sxm.hbm_capacity", "hbm_gb")
cuda_total = fact("h100_sxm.cuda_total_memory", "cuda_total_bytes")  # what vLLM multiplies util by
util = fact("vllm.gpu_memory_utilization_default", "util")
params = given(
    "params_70b",
    70.55e9,
    unit="params",
    source="Llama-3.1-70B parameter count from its config (see the recompute-vs-fetch script)",
)
n = given("victim_tokens", 6144, unit="tokens", source="6K read as 6 x 1024 tokens (prompt + generated so far)")
act_peak = given("activation_peak", 2.5e9, unit="B", source="example figure per GPU, the same as in the "
                 "max-concurrent-requests-memory-budget answer; vLLM measures it in a dummy run at startup")
non_torch = given("non_torch", 1.0e9, unit="B", source="example figure per GPU (CUDA context, NCCL), the same as in "
                  "the max-concurrent-requests-memory-budget answer; vLLM measures it from cudaMemGetInfo")
graphs = given("cudagraph_estimate", 0.5e9, unit="B", source="example figure per GPU, the same as in the "
               "max-concurrent-requests-memory-budget answer; estimated by a dummy capture since v0.21")
overheads = claim("runtime_overheads_per_gpu", act_peak + non_torch + graphs, unit="B")
w_gpu = params * 2 / gpus
# The pool, sized as vLLM sizes it (request - weights - activation peak - non-torch - graphs), in tokens.
pool = claim("pool_tokens", gpus * (cuda_total * util - w_gpu - overheads) / kv_tok, unit="tokens")
pool_ceiling = gpus * (cuda_total * util - w_gpu) / kv_tok  # what an earlier version used

# %% [markdown]
# ## Swap: move the victim's KV to host memory and back

# %%
kv_victim = claim("victim_kv_bytes", n * kv_tok, unit="B")
kv_victim_gpu = claim("victim_kv_per_gpu", kv_victim / gpus, unit="B")
swap_one_way = claim("swap_one_way_ms", kv_victim_gpu / (pcie * 1e9) * 1e3, unit="ms")
swap_total = claim("swap_round_trip_ms", 2 * swap_one_way, unit="ms")
check(kv_victim == 1.875 * 2**30, "1.875 GiB of KV for 6,144 tokens")

# %% [markdown]
# ## Recompute: prefill 6,144 tokens again (linear layers + causal attention)

# %%
lin = 2 * params * n  # FLOPs of the weight matmuls
attn = 2 * L * d * n**2  # FLOPs of causal attention (QK^T and PV)
recompute_ms = claim("recompute_ms", (lin + attn) / (gpus * F * 1e12) * 1e3, unit="ms")
# Preemption happens when the pool is full, so a decode step then reads every GPU's share of the whole pool's
# KV as well as its weights. The weights-only step is what an earlier version used; it is kept for contrast.
step_w_ms = claim("decode_step_weights_only_ms", w_gpu / (hbm_bw * 1e12) * 1e3, unit="ms")
kv_read_gpu = claim("kv_read_per_gpu_full_pool", pool * kv_tok / gpus, unit="B")
kv_ms = claim("kv_read_ms_full_pool", kv_read_gpu / (hbm_bw * 1e12) * 1e3, unit="ms")
step_ms = claim("decode_step_ms", step_w_ms + kv_ms, unit="ms")
claim("kv_over_weight_read_full_pool", kv_ms / step_w_ms, unit="x")
steps_equiv = claim("recompute_in_decode_steps", recompute_ms / step_ms, unit="steps")
claim("swap_round_trip_in_decode_steps", swap_total / step_ms, unit="steps")
steps_equiv_old = claim("recompute_in_weight_only_steps", recompute_ms / step_w_ms, unit="steps")
ratio = claim("recompute_over_swap", recompute_ms / swap_total, unit="x")
check(ratio > 10, "recompute costs over 10x the swap round trip in device time")
print(
    f"victim KV {kv_victim / 2**30:.3f} GiB, {kv_victim_gpu / 2**20:.0f} MiB/GPU; swap {swap_one_way:.2f} ms each way"
)
print(
    f"recompute {recompute_ms:.1f} ms (attention {attn / (lin + attn):.1%}); "
    f"decode step {step_ms:.2f} ms -> {steps_equiv:.0f} steps"
)

# %% [markdown]
# ## Who pays for recompute: the batch, through chunked prefill
# With a 2,048-token chunk the recompute is spread over 3 steps; each of those steps carries its chunk's FLOPs.

# %%
chunk = given("chunk_tokens", 2048, unit="tokens", source="--max-num-batched-tokens 2048, set for this example")
chunks = claim("recompute_chunks", n / chunk, unit="steps")
chunk_ms = claim("chunk_extra_ms", recompute_ms / chunks, unit="ms")
stalled_step = claim("stalled_step_ms", step_ms + chunk_ms, unit="ms")
spike = claim("tpot_spike", stalled_step / step_ms, unit="x")
stalled_old = claim("stalled_step_weights_only_ms", step_w_ms + chunk_ms, unit="ms")
spike_old = claim("tpot_spike_weights_only", stalled_old / step_w_ms, unit="x")
check(spike < spike_old, "counting the pool's KV read makes the spike smaller, not larger")
# If the chunk's compute fully overlapped the step's memory traffic, the step would take the larger of the two.
spike_overlap = claim("tpot_spike_overlapped", max(step_ms, chunk_ms) / step_ms, unit="x")
print(f"{chunks:.0f} chunks of {chunk_ms:.1f} ms: steps go from {step_ms:.2f} to {stalled_step:.1f} ms ({spike:.1f}x)")

# %% [markdown]
# ## The third policy: reserve the worst case at admission, so nobody is preempted
# Example workload: 2,048-token prompts, max_tokens 6,144 (8,192 worst case), mean completion 1,024.

# %%
prompt = given("prompt_tokens", 2048, unit="tokens", source="example workload")
max_new = given("max_new_tokens", 6144, unit="tokens", source="example workload: max_tokens")
mean_new = given("mean_new_tokens", 1024, unit="tokens", source="example workload: mean completion length")
worst = claim("worst_case_tokens", prompt + max_new, unit="tokens")
mean_tot = claim("mean_tokens", prompt + mean_new, unit="tokens")
conc_reserve = claim("concurrency_reserved", pool // worst, unit="requests")
conc_optimistic = claim("concurrency_optimistic", pool // mean_tot, unit="requests")
conc_ratio = claim("optimistic_over_reserved", conc_optimistic / conc_reserve, unit="x")
conc_reserve_old = claim("concurrency_reserved_before_overheads", pool_ceiling // worst, unit="requests")
print(
    f"pool {pool:,.0f} tokens; "
    f"reserved {conc_reserve:.0f} vs optimistic {conc_optimistic:.0f} requests ({conc_ratio:.2f}x)"
)

# %% [markdown]
# ## A short victim, for contrast

# %%
attn_share = claim("attention_share", attn / (lin + attn), unit="fraction")
short = given("short_victim_tokens", 512, unit="tokens", source="example short victim")
short_ms = claim("short_recompute_ms", (2 * params * short + 2 * L * d * short**2) / (gpus * F * 1e12) * 1e3, unit="ms")
