# %% [markdown]
# # The sampler's HBM bytes per decode step at a 128K vocabulary
# Llama-3.1-8B (Meta's sku_list.py via facts.yaml) in bf16 on one H100 SXM, decoding a batch of requests
# that all sample (temperature, top-k and top-p set, no logprobs, no penalties). The sampler is vLLM V1's
# PyTorch path: `Sampler.forward` (vllm/v1/sample/sampler.py @3e342658) casts the logits to float32 and
# divides by the temperature in place; `TopKTopPSampler.forward_native` and `apply_top_k_top_p`
# (vllm/v1/sample/ops/topk_topp_sampler.py @3babc05a) sort the row, mask by k and by p, scatter back,
# take the softmax and call `random_sample`, which draws `q ~ Exp(1)`, divides and takes the argmax.
# Each line of the table below is one kernel over the [batch, vocab] matrix, priced by the bytes it must
# read and write per element (a lower bound: a sort makes more than one pass, and a softmax reads its row
# more than once when the row does not stay on chip).

# %%
from qbank.verify import check, claim, fact, given

L = fact("llama3_1_8b.num_hidden_layers", "layers")
d = fact("llama3_1_8b.hidden_size", "hidden")
kvh = fact("llama3_1_8b.num_key_value_heads", "kv_heads")
hd = fact("llama3_1_8b.head_dim", "head_dim")
ffn = fact("llama3_1_8b.intermediate_size", "ffn")
vocab = fact("llama3_1_8b.vocab_size", "vocab")
bw = fact("h100_sxm.hbm_bandwidth", "hbm_bw") * 1e12
total_mem = fact("h100_sxm.cuda_total_memory", "cuda_total_memory")
util = fact("vllm.gpu_memory_utilization_default", "gpu_memory_utilization")

batch = given("batch", 128, unit="requests", source="the question's hypothetical decode batch")
ctx = given("mean_context", 2048, unit="tokens", source="the question's hypothetical mean context per request")
ctx_short = given("short_context", 512, unit="tokens", source="the question's hypothetical short-chat mix")
bf16 = given("bf16_bytes", 2, unit="B", source="bf16 stores 2 bytes per value")

params = claim("params", L * (d * (2 * d + 2 * kvh * hd) + 3 * d * ffn) + 2 * vocab * d, unit="params")
weight_bytes = claim("weight_bytes", bf16 * params, unit="B")
kv_per_token = claim("kv_bytes_per_token", 2 * L * kvh * hd * bf16, unit="B")
kv_bytes = claim("kv_bytes_step", batch * ctx * kv_per_token, unit="B")
budget = claim("vllm_budget", util * total_mem, unit="B")
headroom = claim("headroom_for_activations", budget - weight_bytes - kv_bytes, unit="B")
check(headroom > 0, "weights and the batch's KV fit in vLLM's budget on one H100")
step_bytes = claim("model_bytes_step", weight_bytes + kv_bytes, unit="B")
step_s = claim("model_step_seconds", step_bytes / bw, unit="s")

# %% [markdown]
# ## One line per kernel: bytes read and written per element of the [batch, vocab] matrix
# fp32 = 4 B, bf16 = 2 B, bool = 1 B, int64 indices = 8 B.

# %%
fp32 = given("fp32_bytes", 4, unit="B", source="float32 stores 4 bytes per value")
mask = given("bool_bytes", 1, unit="B", source="torch.bool stores 1 byte per element")
idx = given("int64_bytes", 8, unit="B", source="torch.sort returns int64 indices, 8 bytes each")
passes = {  # kernel: (bytes read, bytes written) per element
    "cast bf16 -> fp32": (bf16, fp32),
    "divide by temperature, in place": (fp32, fp32),
    "sort the row (values and int64 indices)": (fp32, fp32 + idx),
    "top-k: compare with the k-th value": (fp32, mask),
    "top-k: masked_fill_": (mask + fp32, fp32),
    "top-p: softmax of the sorted row": (fp32, fp32),
    "top-p: cumsum": (fp32, fp32),
    "top-p: compare with 1 - p": (fp32, mask),
    "top-p: masked_fill_": (mask + fp32, fp32),
    "scatter back to vocabulary order": (fp32 + idx, fp32),
    "softmax": (fp32, fp32),
    "q.exponential_()": (0, fp32),
    "probs.div_(q)": (2 * fp32, fp32),
    "argmax": (fp32, 0),
}


def row(*names: str) -> float:
    return sum(sum(passes[n]) for n in names)


# the answer's table groups the kernels into these rows
claim("row_cast", row("cast bf16 -> fp32"), unit="B")
claim("row_temperature", row("divide by temperature, in place"), unit="B")
claim("row_sort", row("sort the row (values and int64 indices)"), unit="B")
claim("row_top_k", row("top-k: compare with the k-th value", "top-k: masked_fill_"), unit="B")
claim("row_top_p_scan", row("top-p: softmax of the sorted row", "top-p: cumsum"), unit="B")
claim("row_top_p_mask", row("top-p: compare with 1 - p", "top-p: masked_fill_"), unit="B")
claim("row_scatter", row("scatter back to vocabulary order"), unit="B")
claim("row_softmax", row("softmax"), unit="B")
claim("row_race", row("q.exponential_()", "probs.div_(q)"), unit="B")
claim("row_argmax", row("argmax"), unit="B")
kernels = claim("sampler_kernels", len(passes), unit="kernels")
per_elem = claim("sampler_bytes_per_element", sum(r + w for r, w in passes.values()), unit="B")
sort_share = claim(
    "sort_and_scatter_share",
    row("sort the row (values and int64 indices)", "scatter back to vocabulary order") / per_elem,
    unit="fraction",
)
elements = claim("logit_elements", batch * vocab, unit="elements")
sampler_bytes = claim("sampler_bytes_step", per_elem * elements, unit="B")
sampler_s = claim("sampler_seconds_step", sampler_bytes / bw, unit="s")
share = claim("sampler_share_of_step", sampler_bytes / (sampler_bytes + step_bytes), unit="fraction")

greedy_per_elem = claim("greedy_bytes_per_element", row("cast bf16 -> fp32", "argmax"), unit="B")
greedy_bytes = claim("greedy_bytes_step", greedy_per_elem * elements, unit="B")
one_read = claim("one_read_bytes_step", bf16 * elements, unit="B")
ratio_min = claim("sampler_over_one_read", sampler_bytes / one_read, unit="x")
logits_fp32 = claim("logits_fp32_bytes", fp32 * elements, unit="B")

# %% [markdown]
# ## Where it stops being noise
# The model's bytes grow with context; the sampler's do not. At a short-chat mix the same batch reads
# far less KV, and at batch 256 the sampler doubles while the weights stay.

# %%
kv_short = batch * ctx_short * kv_per_token
share_short = claim("sampler_share_short", sampler_bytes / (sampler_bytes + weight_bytes + kv_short), unit="fraction")
batch_big = given("batch_big", 256, unit="requests", source="the question's hypothetical larger batch")
share_big_short = claim(
    "sampler_share_b256_short",
    2 * sampler_bytes / (2 * sampler_bytes + weight_bytes + batch_big * ctx_short * kv_per_token),
    unit="fraction",
)
check(batch_big == 2 * batch, "the larger batch doubles the sampler's bytes")
check(weight_bytes + batch_big * ctx_short * kv_per_token < budget, "batch 256 at the short mix still fits")
check(share_short > share, "shorter contexts make the sampler a larger share")
# kernel by kernel: at batch 256 the GEMMs' FLOPs approach their weight-read time, so the step is not purely
# bandwidth-bound there and the byte share above is an upper bound on the sampler's share of the step's time
peak = fact("h100_sxm.bf16_dense", "bf16_peak") * 1e12
gemm_flop_s = claim("gemm_flop_seconds_b256", 2 * params * batch_big / peak, unit="s")
weight_s = claim("weight_read_seconds", weight_bytes / bw, unit="s")
claim("gemm_flops_over_weight_read_b256", gemm_flop_s / weight_s, unit="fraction")
check(gemm_flop_s < weight_s, "batch 256 is still below the GEMMs' ridge")
print(params, weight_bytes, kv_bytes, headroom, step_s, per_elem, sampler_bytes, sampler_s, share, share_short,
      share_big_short, ratio_min)
