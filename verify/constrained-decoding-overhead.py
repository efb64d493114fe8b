# %% [markdown]
# # Where structured-output time goes: the host-side mask against the GPU step
# Llama-3.1-8B (sku_list.py via facts.yaml), bf16, one H100 SXM, decode batch 256; step time from the
# weight-read/compute roofline (KV ignored: short outputs). Mask layout: int32 words, one bit per token.
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
batch = given("batch", 256, unit="requests", source="example decode batch")
gpus = given("gpus", 1, unit="GPUs", source="one H100 SXM serves the 8B model")
bits = int(given("bits_per_token", 1, unit="bit", source="packed mask: one bit per vocabulary entry"))

P = L * (d * (2 * d + 2 * kvh * hd) + 3 * d * ffn) + 2 * vocab * d
step = claim("step_time", max(2 * P / (bw * 1e12), 2 * P * batch / (fl * 1e12)), unit="s")
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
check(naive > 100 * budget, "a per-step walk of the vocabulary is hopeless on the critical path")
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
serial_ratio = claim("serial_over_step", serial / step, unit="x")
parallel = claim("parallel_batch_check_time", serial / cores, unit="s")
check(
    serial > step > parallel, "serial runtime checks would exceed the step; spread over cores and overlapped they fit"
)
print(step, budget, mask_bytes, h2d, h2d_share, naive, table, dep, serial, parallel)
