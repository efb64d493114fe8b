# %% [markdown]
# # Is a 0.3-point MMLU drop a regression? Error bars for a quantization eval, and what the throughput buys
# Benchmark sizes: MMLU's test split has 14,042 questions (cais/mmlu dataset card, commit c30699e8:
# "test ... num_examples: 14042"); GSM8K's test split has 1,319 problems (openai/gsm8k dataset card, test split).
# Accuracies and flip rates are the question's hypotheticals; the point is how the error bar depends on them.
# Unpaired: SE(diff) = sqrt(2 p (1 - p) / n). Paired on the same questions (McNemar): SE(diff) ~ sqrt(f / n), where
# f is the fraction of questions on which the two models disagree about correctness.

# %%
import math

from qbank.verify import check, claim, fact, given

n_mmlu = given("n_mmlu", 14042, source="cais/mmlu dataset card (commit c30699e8): test split 14,042 examples")
n_gsm = given("n_gsm8k", 1319, source="openai/gsm8k dataset card: test split 1,319 examples")
p_mmlu = given("p_mmlu", 0.80, unit="fraction", source="the question's hypothetical baseline accuracy on MMLU")
p_gsm = given("p_gsm8k", 0.90, unit="fraction", source="the question's hypothetical baseline accuracy on GSM8K")
d_mmlu = given("drop_mmlu", 0.003, unit="fraction", source="the question's reported drop: 0.3 points on MMLU")
d_gsm = given("drop_gsm8k", 0.015, unit="fraction", source="the question's reported drop: 1.5 points on GSM8K")
f_mmlu = given("flip_mmlu", 0.03, unit="fraction", source="the question's hypothetical: 3% of MMLU questions change "
               "correctness between the two models (measure it: it is a count from the paired results)")
f_gsm = given("flip_gsm8k", 0.06, unit="fraction", source="the question's hypothetical: 6% of GSM8K problems change "
              "correctness (longer generations diverge more)")
z95 = given("z95", 1.96, source="two-sided 95% normal quantile")
z80 = given("z80", 0.84, source="one-sided 80% power normal quantile (0.8416)")

# %% [markdown]
# ## Error bars, unpaired and paired

# %%
def unpaired(p: float, n: float) -> float:
    return math.sqrt(2 * p * (1 - p) / n)


def paired(f: float, n: float) -> float:
    return math.sqrt(f / n)


ci_u_mmlu = claim("ci_unpaired_mmlu", z95 * unpaired(p_mmlu, n_mmlu), unit="fraction")
ci_p_mmlu = claim("ci_paired_mmlu", z95 * paired(f_mmlu, n_mmlu), unit="fraction")
ci_u_gsm = claim("ci_unpaired_gsm8k", z95 * unpaired(p_gsm, n_gsm), unit="fraction")
ci_p_gsm = claim("ci_paired_gsm8k", z95 * paired(f_gsm, n_gsm), unit="fraction")
check(d_mmlu < ci_u_mmlu and d_gsm < ci_u_gsm, "unpaired, neither drop is distinguishable from noise")
check(d_gsm > ci_p_gsm and d_mmlu > ci_p_mmlu, "paired, both drops fall outside their 95% intervals")
check(d_mmlu < (z95 + z80) * paired(f_mmlu, n_mmlu), "but the MMLU drop is below what the eval can detect with 80% power")
claim("z_paired_mmlu", d_mmlu / paired(f_mmlu, n_mmlu))
claim("z_paired_gsm8k", d_gsm / paired(f_gsm, n_gsm))
claim("mde_paired_mmlu", (z95 + z80) * paired(f_mmlu, n_mmlu), unit="fraction")
claim("mde_paired_gsm8k", (z95 + z80) * paired(f_gsm, n_gsm), unit="fraction")
claim("paired_gain_mmlu", unpaired(p_mmlu, n_mmlu) / paired(f_mmlu, n_mmlu), unit="x")
# how many problems a GSM8K-like eval needs for a paired 95% interval of +-0.5 points at this flip rate
target = given("target_halfwidth", 0.005, unit="fraction", source="the question's target: +-0.5 points")
claim("n_needed_gsm_like", math.ceil(f_gsm * (z95 / target) ** 2))

# %% [markdown]
# ## What the quantization buys: decode step at batch 32, Llama-3.1-70B on one H200 (weights + KV)

# %%
hbm = fact("h200_sxm.hbm_bandwidth", "hbm_tbs")
kv_tok = fact("derived.kv_bytes_per_token_llama31_70b_bf16", "kv_per_token")
batch = given("batch", 32, unit="sequences", source="the question's hypothetical decode batch")
ctx = given("context", 2048, unit="tokens", source="the question's hypothetical context")
w_bf16 = given("weights_bf16", 141.1e9, unit="B", source="Llama-3.1-70B BF16 weights (70.55B params x 2 B, from the "
               "facts file's config as in why-speculative-decoding-works)")
w_fp8 = given("weights_fp8", 72.65e9, unit="B", source="GEMM weights at 1 B, embedding and LM head in BF16, as derived "
              "in int4-weight-only-vs-fp8-w8a8")
kv = batch * ctx * kv_tok
cuda_total = fact("h200_sxm.cuda_total_memory", "cuda_total")
util = fact("vllm.gpu_memory_utilization_default", "util")
check(w_fp8 + kv + 4e9 < cuda_total * util, "FP8 weights plus the batch's KV fit one H200")
gpus_bf16 = given("gpus_bf16", 2, unit="GPUs", source="BF16 weights (141 GB) plus KV do not fit one H200's 138 GB "
                  "budget: TP2")
check(w_bf16 + kv + 4e9 > cuda_total * util, "BF16 needs a second H200")
# TP2 adds two all-reduces per layer to every BF16 step, each of one hidden vector per sequence. Priced with NCCL
# v2.30.7-1's ring LL model (src/graph/tuning.cc: baseLatencies Ring LL 6.6 us, hwLatencies NVLINK Ring LL 0.6 us
# per step, 2(n-1) steps, busBw = min(llMaxBw Hopper 141 GB/s, 0.5 x link), algorithm bandwidth busBw x n/(2(n-1))).
# vLLM's custom all-reduce (world_size 2 is supported) is faster than this, so the term is an upper bound.
layers = fact("llama3_1_70b.num_hidden_layers", "layers")
hidden = fact("llama3_1_70b.hidden_size", "hidden")
nvlink = fact("h200_sxm.nvlink_bw_per_gpu", "nvlink_gbs")
ar_per_layer = given("allreduces_per_layer", 2, source="Megatron-LM tensor parallelism (arXiv:1909.08053 §3)")
ring_steps = 2 * (gpus_bf16 - 1)
ar_lat = given("nccl_ring_ll_lat_tp2", 6.6e-6 + ring_steps * 0.6e-6, unit="s", source="NCCL v2.30.7-1 "
               "src/graph/tuning.cc: baseLatencies Ring LL 6.6 us + 2(n-1) x hwLatencies NVLINK Ring LL 0.6 us")
ll_bus_bw = min(141.0, 0.5 * nvlink / 2) * 1e9  # llMaxBws Hopper-N1 141 GB/s; NVLink per direction, halved by LL
ar_msg = batch * hidden * 2
ar_time = claim("allreduce_time_tp2", ar_lat + ar_msg / (ll_bus_bw * gpus_bf16 / ring_steps), unit="s")
ar_step = claim("allreduce_per_step_tp2", ar_per_layer * layers * ar_time, unit="s")
t_fp8 = claim("step_fp8", (w_fp8 + kv) / (hbm * 1e12), unit="s")
t_bf16 = claim("step_bf16_tp2", (w_bf16 + kv) / gpus_bf16 / (hbm * 1e12) + ar_step, unit="s")
claim("allreduce_share_tp2", ar_step / t_bf16, unit="fraction")
check(t_bf16 < t_fp8, "the TP2 BF16 step is still shorter than the FP8 one")
tput_fp8 = claim("tput_per_gpu_fp8", batch / t_fp8, unit="tokens/s")
tput_bf16 = claim("tput_per_gpu_bf16", batch / t_bf16 / gpus_bf16, unit="tokens/s")
claim("fp8_per_gpu_gain", tput_fp8 / tput_bf16, unit="x")
print(f"CI mmlu unpaired {ci_u_mmlu:.4f} paired {ci_p_mmlu:.4f}; gsm unpaired {ci_u_gsm:.4f} paired {ci_p_gsm:.4f}")
given("ci_level", 0.95, unit="fraction", source="the conventional 95% two-sided interval (z = 1.96)")
claim("n_needed_over_test", math.ceil(f_gsm * (z95 / target) ** 2) / n_gsm, unit="x")
given("gpus_fp8", 1, unit="GPUs", source="FP8 weights and the batch fit one H200 (checked above)")
given("power", 0.80, unit="fraction", source="the conventional 80% power for a detection floor (z = 0.84)")
