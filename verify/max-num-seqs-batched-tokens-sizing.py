# %% [markdown]
# # Sizing max_num_seqs and max_num_batched_tokens for a chat workload
# Llama-3.1-8B (bf16) on one H100 under vLLM V1. Four limits on the running batch: the KV pool, the
# TPOT target, the CUDA-graph ceiling and the configured max_num_seqs; and two on the per-step token
# budget: the TPOT target while prompts ride in every step, and the activation memory the profile run
# reserves at that many tokens. Roofline derated by declared efficiencies and priced kernel by kernel:
# the GEMMs (one weight read, 2 FLOPs per parameter per token) and attention (the KV reads) are separate
# kernels that run one after the other, so their times add; within the GEMMs, max(bytes, FLOPs).

# %%
from qbank.verify import check, claim, fact, given

params = given("params_8b", 8.03e9, unit="params", source="Llama-3.1-8B count from its config (memory-budget script)")
inter = fact("llama3_1_8b.intermediate_size", "intermediate_size")
layers = fact("llama3_1_8b.num_hidden_layers", "layers")
hidden = fact("llama3_1_8b.hidden_size", "hidden_size")
kv_tok = fact("derived.kv_bytes_per_token_llama31_8b_bf16", "kv_bytes_per_token")
bf16 = given("bf16_bytes", 2, unit="B", source="bf16 stores 2 bytes per value")
given("flops_per_param", 2, unit="FLOP", source="a forward pass costs 2 FLOPs (multiply + add) per parameter per token")
bw = fact("h100_sxm.hbm_bandwidth", "h100_bw") * 1e12
flops = fact("h100_sxm.bf16_dense", "h100_bf16") * 1e12
eta_m = given("mem_efficiency", 0.8, unit="fraction", source="the question's hypothetical: achieved share of HBM bandwidth")
eta_f = given("flop_efficiency", 0.6, unit="fraction", source="the question's hypothetical: achieved share of bf16 FLOP/s")
total_mem = fact("h100_sxm.cuda_total_memory", "cuda_total_memory")
util = fact("vllm.gpu_memory_utilization_default", "gpu_memory_utilization")
reserve = given("runtime_reserve", 3e9, unit="B",
                source="the question's hypothetical: activation peak, non-torch memory and graph pool together")
seqs_default = given("max_num_seqs_default", 1024, unit="sequences",
                     source="github:vllm-project/vllm vllm/engine/arg_utils.py get_batch_defaults @99d7eb5d (H100 class)")
budget_default = given("max_num_batched_tokens_default", 8192, unit="tokens",
                       source="github:vllm-project/vllm vllm/engine/arg_utils.py get_batch_defaults @99d7eb5d "
                       "(OPENAI_API_SERVER on >= 70 GiB non-A100 GPUs)")
graph_cap = given("graph_ceiling", 512, unit="sequences",
                  source="github:vllm-project/vllm vllm/config/vllm.py VllmConfig._set_cudagraph_sizes @000fc94b: "
                  "min(max_num_seqs * 2, 512) on Hopper")
prompt = given("prompt_tokens", 1500, unit="tokens", source="the question's hypothetical chat prompt (history + turn)")
out = given("output_tokens", 500, unit="tokens", source="the question's hypothetical reply length")
tpot = given("tpot_target_ms", 30, unit="ms", source="the question's hypothetical TPOT target")

weights = claim("weights_bytes", params * bf16, unit="B")
pool = claim("kv_pool_bytes", total_mem * util - weights - reserve, unit="B")
pool_tokens = claim("kv_pool_tokens", pool / kv_tok, unit="tokens")
mean_live = claim("mean_live_tokens", prompt + out / 2, unit="tokens")
worst_live = claim("worst_live_tokens", prompt + out, unit="tokens")
b_pool_mean = claim("batch_pool_mean", pool_tokens // mean_live, unit="sequences")
b_pool_worst = claim("batch_pool_worst", pool_tokens // worst_live, unit="sequences")


def step_ms(b: float, extra_tokens: float = 0) -> float:
    """b decoding sequences at the mean footprint plus extra_tokens of prompt (at a mean prefix of half a
    prompt): GEMMs max(weight read, FLOPs), then attention: the decodes' KV reads and the chunk's FLOPs."""
    gemm = max(weights / (bw * eta_m), 2 * params * (b + extra_tokens) / (flops * eta_f))
    kv = b * mean_live * kv_tok / (bw * eta_m)
    chunk_attn = 4 * layers * hidden * extra_tokens * prompt / 2 / (flops * eta_f)
    return (gemm + kv + chunk_attn) * 1e3


b_tpot = max(b for b in range(1, 4096) if step_ms(b) <= tpot)
claim("batch_tpot", b_tpot, unit="sequences")
claim("weights_read_ms", weights / (bw * eta_m) * 1e3, unit="ms")
claim("per_sequence_ms", mean_live * kv_tok / (bw * eta_m) * 1e3, unit="ms")
claim("gemm_ridge_tokens", weights / (bw * eta_m) * flops * eta_f / (2 * params), unit="tokens")
claim("per_token_gemm_us", 2 * params / (flops * eta_f) * 1e6, unit="us")
binding = min(b_pool_mean, b_tpot, graph_cap, seqs_default)
check(binding == b_pool_mean, "decode-only: the KV pool binds first, before the TPOT target, the graph ceiling and the default")
check(b_pool_worst < b_pool_mean < b_tpot, "worst-case reservation < mean footprint < decode-only TPOT limit")
claim("default_over_pool", seqs_default / b_pool_mean, unit="x")

# %% [markdown]
# ## The cap and the budget together: prompts ride in every step
# In steady state every finishing request is replaced, and its prompt is prefilled on the same GPU: per
# decode step the batch needs b * prompt / out prompt tokens (Little's law). The step that meets the TPOT
# target carries b decodes plus those prompt tokens; the largest such b sets the cap, b + the prompt
# tokens the budget.

# %%
ppd = claim("prompt_tokens_per_decode", prompt / out, unit="tokens")
b_bal = max(b for b in range(1, 4096) if step_ms(b, b * ppd) <= tpot)
claim("batch_balanced", b_bal, unit="sequences")
# vLLM's default capture ladder on Hopper (VllmConfig._set_cudagraph_sizes @000fc94b, as rebuilt in
# cuda-graph-capture-sizes-padding-waste): pick the cap at a captured size
ladder = [1, 2, 4] + list(range(8, 256, 8)) + list(range(256, 513, 16))
chosen = claim("chosen_max_num_seqs", max(s for s in ladder if s <= b_bal), unit="sequences")
check(b_pool_worst > chosen, "the balanced batch fits the pool even with every request at its longest")
claim("pool_idle_share_at_cap", 1 - chosen * worst_live / pool_tokens, unit="fraction")
budget_ok = claim("budget_for_tpot", int(chosen + chosen * ppd), unit="tokens")
chunk = claim("prefill_tokens_per_step", budget_ok - chosen, unit="tokens")
claim("step_ms_chosen", step_ms(chosen, chunk), unit="ms")
claim("tpot_headroom", 1 - step_ms(chosen, chunk) / tpot, unit="fraction")
prefill_rate = claim("prefill_tokens_per_s", chunk / (tpot / 1e3), unit="tokens/s")
lam_prefill = claim("arrivals_prefill_limit", prefill_rate / prompt, unit="requests")
lam_decode = claim("arrivals_decode_limit", chosen / (tpot / 1e3 * out), unit="requests")
check(0.95 < lam_prefill / lam_decode < 1.05, "the two limits on the arrival rate match")

# the tempting setting: the cap at the pool's limit (a captured size), decode-only within the target
cap_pool = claim("cap_at_pool", max(s for s in ladder if s <= b_pool_mean), unit="sequences")
claim("step_ms_cap_pool_decode_only", step_ms(cap_pool), unit="ms")
check(step_ms(cap_pool) <= tpot, "a decode-only step at the pool's cap meets the target")
claim("step_ms_cap_pool_with_prompts", step_ms(cap_pool, cap_pool * ppd), unit="ms")
claim("prompt_tokens_at_pool_cap", cap_pool * ppd, unit="tokens")
check(cap_pool > b_bal, "a batch at the pool's cap cannot meet the target while it feeds itself")

# %% [markdown]
# ## The default budget: one step with a full 8,192-token slice of prompts

# %%
step_default = claim("step_ms_default_budget", step_ms(chosen, budget_default - chosen), unit="ms")
claim("default_step_over_target", step_default / tpot, unit="x")
check(step_default > 5 * tpot, "the default budget puts a prompt-bearing step far past the TPOT target")

# %% [markdown]
# ## The budget's memory: the profile run's activations
# vLLM's profile run pushes max_num_batched_tokens tokens through the model and measures the peak. One
# large activation that scales with the budget: the fused gate/up projection's output, tokens x 2 x
# intermediate_size in bf16. The measured peak is larger; the ratio between budgets is the point.

# %%
act_default = claim("gate_up_bytes_default", budget_default * 2 * inter * bf16, unit="B")
act_ok = claim("gate_up_bytes_tpot_budget", budget_ok * 2 * inter * bf16, unit="B")
claim("gate_up_share_of_pool", act_default / pool, unit="fraction")
saving = claim("gate_up_saving_in_tokens", (act_default - act_ok) / kv_tok, unit="tokens")
claim("gate_up_saving_in_requests", saving / worst_live, unit="requests")
