# %% [markdown]
# # TP all-reduce time against prefill compute, NVLink 3 to NVLink 5
# Llama-3.1-70B at TP=8 on one 8-GPU node. Megatron-style TP sums partial outputs twice in every layer (once
# behind o_proj, once behind down_proj), each time T × hidden BF16 activations. NCCL's all-reduce
# moves 2(n−1)/n of the message per rank over each rank's per-direction bandwidth (nccl-tests PERFORMANCE.md:
# t = (S/B)·2(n−1)/n). Compute per GPU: 2·P FLOP per token over n GPUs, plus causal attention over the prompt.
# Both sides at datasheet peak; a common derating leaves the ratio unchanged, a one-sided one is shown.

# %%
from datasheets import sheet
from dense_llama import llama

from qbank.verify import check, claim, fact, given

m = llama("llama3_1_70b")
layers, d, nq, nkv, hd, ffn, vocab = m.layers, m.d, m.nq, m.nkv, m.hd, m.ffn, m.vocab
tp = given("tp_gpus", 8, unit="GPUs", source="the question's hypothetical: TP=8 on one 8-GPU node")
check(tp <= nkv, "TP=8 does not exceed the 8 KV heads, so no K/V projection is replicated")
allreduces = given(
    "allreduces_per_layer",
    2,
    source="Megatron-LM tensor parallelism (Shoeybi et al. 2019, arXiv:1909.08053 §3, Fig. 4: 'two all-reduce "
    "operations in the forward path' per transformer layer); vLLM RowParallelLinear all-reduces o_proj and down_proj",
)
act_bytes = given("activation_bytes", 2, unit="B", source="BF16 activations, 2 bytes per value")
ring_coeff = given(
    "ring_coeff", 2, source="nccl-tests doc/PERFORMANCE.md: an all-reduce needs 2(n-1) transfers per element"
)
decode_batch = given("decode_batch", 64, unit="sequences", source="the question's hypothetical: a decode batch of 64")
prompt = given("prompt_tokens", 8192, unit="tokens", source="the question's hypothetical: an 8K-token prompt")

# NVLink per GPU, bidirectional totals from the datasheets; NCCL's B is per direction (half).
gens = {
    "a100": (sheet("a100", "bf16"), sheet("a100", "nvlink")),
    "h100": (fact("h100_sxm.bf16_dense", "h100_bf16"), fact("h100_sxm.nvlink_bw_per_gpu", "h100_nvlink")),
    "b200": (fact("b200_hgx.bf16_dense", "b200_bf16"), fact("b200_hgx.nvlink_bw_per_gpu", "b200_nvlink") * 1e3),
}
fp8 = {
    "h100": fact("h100_sxm.fp8_dense", "h100_fp8"),
    "b200": fact("b200_hgx.fp8_dense", "b200_fp8"),
}

# %% [markdown]
# ## The model's side: FLOPs per byte of all-reduce traffic, per token per GPU

# %%
params = m.params
ring = claim("ring_factor", ring_coeff * (tp - 1) / tp)
claim("decode_message_bytes", decode_batch * d * act_bytes, unit="B")
link_bytes_tok = claim("link_bytes_per_token", allreduces * layers * d * act_bytes * ring, unit="B")
attn_flops_tok = 4 * layers * nq * hd * (prompt / 2)  # QK^T and PV, causal: mean context prompt/2
claim("attention_share_of_flops", attn_flops_tok / (2 * params), unit="fraction")
flops_tok_gpu = claim("flops_per_token_per_gpu", (2 * params + attn_flops_tok) / tp, unit="FLOP")
model_ratio = claim("model_flops_per_link_byte", flops_tok_gpu / link_bytes_tok)
claim("all_reduce_message_bytes", prompt * d * act_bytes, unit="B")

# %% [markdown]
# ## The hardware side, and the comm/compute ratio per generation
# comm/compute = (hardware FLOP per link byte) / (model FLOP per link byte). The prompt length cancels
# except through attention.

# %%
share = {}
for g, (tf, nvl) in gens.items():
    per_dir = nvl / 2
    claim(f"{g}_nvlink_per_direction", per_dir, unit="GB/s")
    hw = claim(f"{g}_flops_per_link_byte", tf * 1e12 / (per_dir * 1e9))
    share[g] = claim(f"{g}_comm_over_compute", hw / model_ratio, unit="fraction")
    t_comm = claim(f"{g}_comm_time_prompt", prompt * link_bytes_tok / (per_dir * 1e9), unit="s")
    t_comp = claim(f"{g}_compute_time_prompt", prompt * flops_tok_gpu / (tf * 1e12), unit="s")
    check(abs(t_comm / t_comp - share[g]) < 1e-9, f"{g}: time ratio equals the FLOP-per-byte ratio")
check(share["a100"] < share["h100"] < share["b200"], "each generation spends a larger share on the all-reduce")
# With FP8 weights only the GEMMs move to the FP8 rate; the attention kernel (QK^T, PV over the BF16 cache) stays
# at the BF16 rate. Price the two separately per token per GPU.


def fp8_compute_s(g: str, n: float) -> float:
    """Seconds of math per prompt token per GPU at TP n: FP8 GEMMs plus BF16 attention."""
    return 2 * params / (n * fp8[g] * 1e12) + attn_flops_tok / (n * gens[g][0] * 1e12)


fp8_share = {}
for g in fp8:
    nvl = gens[g][1]
    t_link = link_bytes_tok / (nvl / 2 * 1e9)
    s8 = fp8_share[g] = claim(f"{g}_fp8_comm_over_compute", t_link / fp8_compute_s(g, tp), unit="x")
    claim(f"{g}_fp8_serial_comm_fraction", s8 / (1 + s8), unit="fraction")
claim(
    "b200_fp8_attention_share_of_compute",
    attn_flops_tok / (tp * gens["b200"][0] * 1e12) / fp8_compute_s("b200", tp),
    unit="fraction",
)
check(fp8_share["b200"] > 1, "B200 in FP8: the BF16 all-reduce takes longer than the math")
check(0.9 < fp8_share["h100"] < 1.1, "H100 in FP8: the all-reduce is about as long as the math")
claim("fp8_rate_ratio", fp8["h100"] / gens["h100"][0], unit="x")
claim("nvlink_growth_a100_b200", gens["b200"][1] / gens["a100"][1], unit="x")
claim("bf16_growth_a100_b200", gens["b200"][0] / gens["a100"][0], unit="x")

# %% [markdown]
# ## Levers
# (1) FP8 all-reduce payload halves link bytes; (2) TP4 × DP2 instead of TP8: ring factor 1.5, half the GPUs
# per replica, so FLOPs per link byte per GPU double and the factor falls; (3) a one-sided derating: NCCL reaching
# an assumed 80% of link peak while GEMMs reach an assumed 60% of dense peak (sensitivity, not a measurement).

# %%
fp8_payload = given("fp8_payload_bytes", 1, unit="B", source="FP8 communication: 1 byte per activation value")
b200_fp8_share = fp8_share["b200"]
claim("b200_fp8_share_fp8_payload", b200_fp8_share * fp8_payload / act_bytes, unit="fraction")
tp4 = given("tp4", 4, unit="GPUs", source="alternative layout: TP=4, two replicas per node")
ring4 = claim("ring_factor_tp4", ring_coeff * (tp4 - 1) / tp4)
claim("tp_ratio", tp / tp4, unit="x")
claim("replicas_per_node", tp / tp4, unit="replicas")
claim("payload_ratio", fp8_payload / act_bytes, unit="x")
link4 = allreduces * layers * d * act_bytes * ring4
b200_tp4 = claim(
    "b200_fp8_share_tp4", link4 / (gens["b200"][1] / 2 * 1e9) / fp8_compute_s("b200", tp4), unit="fraction"
)
check(b200_tp4 < b200_fp8_share, "TP4 lowers the share")
nccl_eff = given("nccl_efficiency", 0.8, unit="fraction", source="assumption: achieved busbw over link peak")
mfu = given("gemm_efficiency", 0.6, unit="fraction", source="assumption: achieved share of dense Tensor-Core peak")
claim("h100_bf16_share_derated", share["h100"] * mfu / nccl_eff, unit="fraction")
claim("b200_bf16_share_derated", share["b200"] * mfu / nccl_eff, unit="fraction")
