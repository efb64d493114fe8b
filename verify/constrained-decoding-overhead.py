# %% [markdown]
# # Where structured-output time goes: the host-side mask against the GPU step
# Llama-3.1-8B (sku_list.py via facts.yaml), bf16, one H100 SXM, decode batch 256; step time from the
# roofline over weight AND KV reads. An earlier version left the KV out and priced the step at the weight read
# alone (4.8 ms), which made the host budget about 3x too tight; at 1,024 tokens of context per request the KV
# read is twice the weight read. Mask layout: int32 words, one bit per token.
# Host costs use an assumed DFA transition cost (stated below); they size the problem, they are not measured.

# %%
from qbank.verify import check, claim, fact, given

L = fact("llama3_1_8b.num_hidden_layers", "layers")
d = fact("llama3_1_8b.hidden_size", "hidden")
kvh = fact("llama3_1_8b.num_key_value_heads", "kv_heads")
hd = fact("llama3_1_8b.head_dim", "head_dim")
ffn = fact("llama3_1_8b.intermediate_size", "ffn")
vocab = fact("llama3_1_8b.vocab_size", "vocab")
bw = fact("h100_sxm.hbm_bandwidth", "hbm_bw")
fl = fact("h100_sxm.bf16_dense", "bf16_flops")
pcie = fact("networking.pcie_gen5_x16", "pcie_gbps")
heads = fact("llama3_1_8b.num_attention_heads", "q_heads")
cuda_total = fact("h100_sxm.cuda_total_memory", "cuda_total_bytes")
util = fact("vllm.gpu_memory_utilization_default", "util")
batch = given("batch", 256, unit="requests", source="example decode batch")
gpus = given("gpus", 1, unit="GPUs", source="one H100 SXM serves the 8B model")
bits = int(given("bits_per_token", 1, unit="bit", source="packed mask: one bit per vocabulary entry"))
ctx = given("context_tokens", 1024, unit="tokens", source="example mean context per request: prompt with the "
            "schema plus the JSON emitted so far")

P = L * (d * (2 * d + 2 * kvh * hd) + 3 * d * ffn) + 2 * vocab * d
kv_tok = claim("kv_bytes_per_token", 2 * L * kvh * hd * 2, unit="B")  # bf16 K and V
kv_read = claim("kv_read_per_step", batch * ctx * kv_tok, unit="B")
check(2 * P + kv_read <= cuda_total * util, "weights + the batch's KV fit in vLLM's budget on one H100")
step_weights_only = claim("step_time_weights_only", max(2 * P / (bw * 1e12), 2 * P * batch / (fl * 1e12)), unit="s")
attn_flops = 4 * ctx * heads * hd * L * batch
step = claim("step_time", max((2 * P + kv_read) / (bw * 1e12), (2 * P * batch + attn_flops) / (fl * 1e12)), unit="s")
weight_read = claim("weight_read_per_step", 2 * P, unit="B")
kv_over_w = claim("kv_over_weight_read", kv_read / (2 * P), unit="x")
step_ratio = claim("step_with_kv_over_without", step / step_weights_only, unit="x")
budget = claim("host_budget_per_request", step / batch, unit="s")

mask_bytes = claim("mask_bytes_per_request", -(-vocab * bits // 32) * 4, unit="B")  # int32 words of 32 bits
batch_mask = claim("batch_mask_bytes", batch * mask_bytes, unit="B")
h2d = claim("mask_h2d_time", batch * mask_bytes / (pcie * 1e9), unit="s")
h2d_share = claim("mask_h2d_share", h2d / step, unit="fraction")
check(h2d_share < 0.02, "shipping the packed masks is under 2% of the step")

# %% [markdown]
# ## Computing the mask: naive walk, per-state table, and the context-dependent remainder

# %%
chars = given("mean_token_chars", 4, source="assumed mean characters per token for an English/code BPE vocabulary")
ns = given(
    "ns_per_transition",
    10,
    unit="ns",
    source="assumed cost of one DFA transition in compiled code, cache-resident tables",
)
naive = claim("naive_walk_time", vocab * chars * ns * 1e-9, unit="s")
naive_ratio = claim("naive_over_budget", naive / budget, unit="x")
check(naive > 50 * budget, "a per-step walk of the vocabulary is hopeless on the critical path")
states = given("schema_states", 2000, unit="elements", source="assumed automaton size for a mid-size JSON schema")
table = claim("state_table_bytes", states * mask_bytes, unit="B")

dep_share = given(
    "context_dependent_share",
    0.01,
    unit="fraction",
    source=(
        "assumed share of tokens whose validity depends on the pushdown stack "
        "(XGrammar's context-dependent tokens; the paper reports a small minority)"
    ),
)
dep = claim("context_dependent_check_time", vocab * dep_share * chars * ns * 1e-9, unit="s")
serial = claim("serial_batch_check_time", batch * dep, unit="s")
cores = given("host_cores", 16, source="host cores given to grammar work")
serial_ratio = claim("serial_over_step", serial / step, unit="fraction")
parallel = claim("parallel_batch_check_time", serial / cores, unit="s")
check(dep < budget, "the runtime check now fits the per-request budget on one core")
check(0.5 < serial_ratio < 1, "but serially it takes most of the step: no headroom for schema growth or jitter")
check(parallel < 0.1 * step, "spread over cores and overlapped, it is a few percent of the step")
dep_headroom = claim("context_dependent_share_at_serial_limit", dep_share * step / serial, unit="fraction")
# Serial placement (between sampling and the next launch): host time adds to the step, it is not hidden in it.
# At the 58.8 us/request point the host's serial time equals the GPU step, so throughput halves.
claim("throughput_at_serial_budget", step / (step + batch * budget), unit="fraction")
serial_tput = claim("throughput_with_serial_checks", step / (step + serial), unit="fraction")
check(0.5 < serial_tput < 0.6, "serial runtime checks cost almost half the throughput")
# Jump-forward: each forced token it appends without a decode step saves a whole step of the batch,
# against the per-request mask work a faster mask would save in that step.
claim("step_over_mask_check", step / dep, unit="x")
print(step, budget, mask_bytes, h2d, h2d_share, naive, table, dep, serial, parallel)
