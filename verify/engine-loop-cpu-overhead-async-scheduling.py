# %% [markdown]
# # The engine loop's CPU time against the GPU step
# GPU step: a bandwidth-bound decode step of Llama-3.1-8B in bf16 on an H100 SXM reads the weights plus
# every live request's KV once (config and datasheet from the fact base). CPU time per step is modelled as
# a fixed part (input preparation, launch) plus a per-request part (append token, incremental detokenize,
# stop-string check, scheduler bookkeeping). Both CPU figures are assumptions that the answer labels as
# such; profile your own engine. Synchronous loop: period = GPU + CPU. Overlapped (async scheduling):
# period = max(GPU, CPU).

# %%
from qbank.verify import check, claim, fact, given

layers = fact("llama3_1_8b.num_hidden_layers", "layers")
d = fact("llama3_1_8b.hidden_size", "d_model")
nq = fact("llama3_1_8b.num_attention_heads", "q_heads")
nkv = fact("llama3_1_8b.num_key_value_heads", "kv_heads")
hd = fact("llama3_1_8b.head_dim", "head_dim")
ffn = fact("llama3_1_8b.intermediate_size", "ffn_dim")
vocab = fact("llama3_1_8b.vocab_size", "vocab")
bw = fact("h100_sxm.hbm_bandwidth", "h100_bw")
cpu_fixed = given("cpu_fixed", 0.5e-3, unit="s", source="assumed fixed CPU cost per step (input prep, launch)")
cpu_per_req = given("cpu_per_request", 20e-6, unit="s", source="assumed CPU cost per request per step in a Python loop")
out_len = given("mean_output", 500, unit="tokens", source="assumed mean reply length")

params = layers * (2 * d * nq * hd + 2 * d * nkv * hd + 3 * d * ffn + 2 * d) + 2 * vocab * d + d
weights = claim("weights_bf16", params * 2, unit="B")
kv_tok = claim("kv_bytes_per_token", 2 * layers * nkv * hd * 2, unit="B")


def case(name: str, batch: int, ctx: int) -> dict[str, float]:
    """GPU step, CPU time, and utilisation of the synchronous and overlapped loops."""
    gpu = (weights + batch * ctx * kv_tok) / (bw * 1e12)
    cpu = cpu_fixed + batch * cpu_per_req
    out = {
        "gpu": claim(f"{name}_gpu_step", gpu, unit="s"),
        "cpu": claim(f"{name}_cpu_step", cpu, unit="s"),
        "util_sync": claim(f"{name}_util_sync", gpu / (gpu + cpu), unit="fraction"),
        "util_async": claim(f"{name}_util_async", gpu / max(gpu, cpu), unit="fraction"),
        "gain": claim(f"{name}_throughput_gain", (gpu + cpu) / max(gpu, cpu), unit="x"),
    }
    return out


b1 = int(given("batch_a", 64, unit="requests", source="example: moderate batch"))
c1 = int(given("ctx_a", 1024, unit="tokens", source="example: 1K tokens of context"))
b2 = int(given("batch_b", 512, unit="requests", source="example: large batch of short requests"))
c2 = int(given("ctx_b", 128, unit="tokens", source="example: 128 tokens of context"))
a = case("a", b1, c1)
b = case("b", b2, c2)
check(a["util_async"] == 1.0 and a["gain"] > 1.2, "case a: overlap hides the CPU entirely, over 20% more throughput")
check(b["cpu"] > b["gpu"] and b["util_async"] < 1, "case b: CPU-bound, overlap cannot hide it")
idle_b = claim("b_idle_async", 1 - b["util_async"], unit="fraction")
ahead = given("steps_ahead", 1, unit="steps", source="async scheduling runs the CPU exactly one step ahead of "
    "the GPU (step n+1 planned during step n)")
cpu_budget = claim("b_per_request_budget", (b["gpu"] - cpu_fixed) / b2, unit="s")

# %% [markdown]
# ## The price: a finished request is already scheduled for one more step
# With the loop one step behind, a request that ends at step n (EOS, max tokens, stop string) has been
# launched for step n+1: one wasted slot, and its completion is reported one step later.

# %%
waste = claim("wasted_slot_fraction", 1 / out_len, unit="fraction")
late = claim("a_completion_delay", a["gpu"], unit="s")
print({k: round(v, 5) for k, v in a.items()}, {k: round(v, 5) for k, v in b.items()}, cpu_budget, waste)
