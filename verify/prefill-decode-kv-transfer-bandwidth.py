# %% [markdown]
# # Prefill-to-decode KV transfer: the prompt length cancels
# KV bytes to ship grow with prompt length n; prefill time grows with n too (linear layers), so the bandwidth a
# prefill GPU needs is kv_bytes_per_token x prefill_tokens_per_second, independent of n. Prefill speed is priced at
# the full dense rate of each GPU (an upper bound on the need). Attention FLOPs, ignored here, only lower it.
# Link: one 400 Gb/s ConnectX-7 NIC per GPU (DGX H100/H200/B200 reference architecture).

# %%
from qbank.verify import check, claim, fact, given

nic = fact("networking.nic_per_gpu_connectx7", "nic", unit="Gbit/s")
nic_Bps = claim("nic_bytes_per_s", nic * 1e9 / 8, unit="B/s")
h100 = fact("h100_sxm.bf16_dense", "h100_bf16", unit="TFLOP/s")
b200_fp8 = fact("b200_hgx.fp8_dense", "b200_fp8", unit="TFLOP/s")
h200_fp8 = fact("h200_sxm.fp8_dense", "h200_fp8", unit="TFLOP/s")
kv70 = fact("derived.kv_bytes_per_token_llama31_70b_bf16", "kv70")
kv8 = fact("derived.kv_bytes_per_token_llama31_8b_bf16", "kv8")
kvds = fact("derived.kv_bytes_per_token_deepseek_v3_mla_bf16", "kvds")
p70 = given(
    "params_70b", 70.55e9, unit="params", source="Llama-3.1-70B count from its config (recompute-vs-fetch script)"
)
p8 = given("params_8b", 8.03e9, unit="params", source="Llama-3.1-8B count from its config (memory-budget script)")
pds = fact("deepseek_v3.active_params_per_token", "dsv3_active")


def need(kv_bytes: float, flops: float, params: float) -> float:
    """Bytes per second a prefill GPU emits: KV per token x tokens per second at the dense rate."""
    return kv_bytes * flops * 1e12 / (2 * params)


cases = {
    "llama70b_h100_bf16": need(kv70, h100, p70),
    "llama8b_h100_bf16": need(kv8, h100, p8),
    "llama8b_b200_fp8": need(kv8, b200_fp8, p8),
    "llama8b_b200_fp8_kvfp8": need(kv8 / 2, b200_fp8, p8),
    "dsv3_h200_fp8": need(kvds, h200_fp8, pds),
}
for name, bw in cases.items():
    claim(f"need_{name}", bw, unit="B/s")
    claim(f"nic_share_{name}", bw / nic_Bps, unit="fraction")
    print(f"{name:24s} {bw / 1e9:6.2f} GB/s = {bw / nic_Bps:.1%} of the NIC")
check(cases["llama8b_b200_fp8"] / nic_Bps > 0.7, "a small model on FP8 B200 prefill needs over 70% of its NIC")

# %% [markdown]
# ## Per request it looks like gigabytes; per second of prefill it is a few percent
# An 8,192-token prompt to Llama-3.1-70B at TP8 on H100: its KV, the time to prefill it, the time to ship it.

# %%
n = given("prompt_tokens", 8192, unit="tokens", source="example prompt length")
gpus = fact("h100_sxm.nvlink_domain", "gpus")
layers = fact("llama3_1_70b.num_hidden_layers", "layers")
kv_req = claim("kv_per_request", n * kv70, unit="B")
t_prefill = claim("prefill_ms", n * 2 * p70 / (gpus * h100 * 1e12) * 1e3, unit="ms")
t_ship = claim("ship_ms", kv_req / (gpus * nic_Bps) * 1e3, unit="ms")
claim("ship_over_prefill", t_ship / t_prefill, unit="fraction")
check(
    abs(t_ship / t_prefill - cases["llama70b_h100_bf16"] / nic_Bps) < 1e-12, "the ratio is the NIC share: n cancelled"
)
t_exposed = claim("exposed_ms_layerwise", t_ship / layers, unit="ms")
n2 = given("prompt_tokens_long", 65536, unit="tokens", source="a prompt 8x longer")
check(abs((n2 * kv70 / (n2 * 2 * p70)) - (n * kv70 / (n * 2 * p70))) < 1e-18, "same ratio at 8x the length")
print(
    f"KV {kv_req / 1e9:.2f} GB; prefill {t_prefill:.0f} ms; ship {t_ship:.2f} ms; "
    f"exposed with layer-wise send {t_exposed:.3f} ms"
)

# %% [markdown]
# ## Where n stops cancelling: a prefix-cache hit on the prefill side
# If the prefill node computes only the uncached suffix but must ship the whole prompt's KV, the bytes per
# second of compute scale with 1 / (1 - hit rate).

# %%
hit = given(
    "prefix_hit_rate", 0.8, unit="fraction", source="example: 80% of prompt tokens hit the prefill node's prefix cache"
)
amp = claim("hit_amplification", 1 / (1 - hit), unit="x")
need_hit = claim("need_llama8b_h100_with_hits", cases["llama8b_h100_bf16"] * amp, unit="B/s")
claim("nic_share_llama8b_h100_with_hits", need_hit / nic_Bps, unit="fraction")
fan_in = given("fan_in", 3, unit="nodes", source="example: one decode node fed by 3 prefill nodes")
claim("decode_side_share_llama70b_fan_in", fan_in * cases["llama70b_h100_bf16"] / nic_Bps, unit="fraction")
print(f"with {hit:.0%} hits: x{amp:.0f} -> {need_hit / 1e9:.1f} GB/s = {need_hit / nic_Bps:.0%} of the NIC")

# %% [markdown]
# ## Ratios the answer quotes

# %%
given("flops_per_param", 2, source="a forward pass costs about 2 FLOPs (multiply + add) per active parameter per token")
claim("kv8_fp8_bytes", kv8 / 2, unit="B")
claim("length_ratio", n2 / n, unit="x")
claim("need_8b_over_70b", cases["llama8b_h100_bf16"] / cases["llama70b_h100_bf16"], unit="x")
claim("b200_fp8_over_h100_bf16", b200_fp8 / h100, unit="x")
