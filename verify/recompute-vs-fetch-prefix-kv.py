# %% [markdown]
# # Recompute a cached prefix or fetch it: one ratio
# Recomputing a token of prefix costs about 2 x (active parameters) FLOPs; fetching it costs its KV bytes.
# Dividing the two times gives (2P / kv_bytes) / (F / BW): the model's FLOPs per cached byte against the link's
# FLOPs per byte. Inputs: model configs and H100 figures from the facts file; recompute is priced at the full
# dense BF16 rate (generous to recompute: real prefill MFU is lower, which only widens fetch's lead).

# %%
from qbank.verify import check, claim, fact, given

F = fact("h100_sxm.bf16_dense", "h100_bf16_tflops", unit="TFLOP/s")
hbm_bw = fact("h100_sxm.hbm_bandwidth", "h100_hbm_tbs")
pcie = fact("networking.pcie_gen5_x16", "pcie_gbs", unit="GB/s")
nic = fact("networking.nic_per_gpu_connectx7", "nic_gbit", unit="Gbit/s")
lanes_ssd = given("ssd_lanes", 4, source="NVMe SSDs attach with a PCIe x4 link (NVMe U.2/E3.S form factors)")
ssd = claim("ssd_link_gbs", pcie * lanes_ssd / 16, unit="GB/s")
nic_gbs = claim("nic_gbs", nic / 8, unit="GB/s")
bf16 = given("bf16_bytes", 2, unit="B", source="bf16 is 2 bytes")
fpp = given("flops_per_param", 2, source="a forward pass costs one multiply-add (2 FLOP) per active parameter per token")
gpus_node = fact("h100_sxm.nvlink_domain", "gpus_per_node")

# %% [markdown]
# ## Model side: FLOPs per cached byte


# %%
def llama_params(group: str) -> tuple[float, float, float]:
    """Parameter count from a Llama-3.1 config: untied embedding and head, GQA attention, SwiGLU MLP."""
    L = fact(f"{group}.num_hidden_layers", f"{group}_layers")
    h = fact(f"{group}.hidden_size", f"{group}_hidden")
    nq = fact(f"{group}.num_attention_heads", f"{group}_q_heads")
    nkv = fact(f"{group}.num_key_value_heads", f"{group}_kv_heads")
    hd = fact(f"{group}.head_dim", f"{group}_head_dim")
    ff = fact(f"{group}.intermediate_size", f"{group}_ffn")
    v = fact(f"{group}.vocab_size", f"{group}_vocab")
    return 2 * v * h + L * (2 * h * nq * hd + 2 * h * nkv * hd + 3 * h * ff + 2 * h) + h, L, h


n70, layers, d_model = llama_params("llama3_1_70b")
n8, _, _ = llama_params("llama3_1_8b")
p70 = claim("llama70b_params", n70, unit="params")
p8 = claim("llama8b_params", n8, unit="params")
check(abs(p70 / 1e9 - 70.55) < 0.01 and abs(p8 / 1e9 - 8.03) < 0.01, "70.55B and 8.03B parameters")
ds_active = fact(
    "deepseek_v3.active_params_per_token", "dsv3_active"
)  # the facts loader turns "billion params" into params
kv70 = fact("derived.kv_bytes_per_token_llama31_70b_bf16", "kv70")
kv8 = fact("derived.kv_bytes_per_token_llama31_8b_bf16", "kv8")
kvds = fact("derived.kv_bytes_per_token_deepseek_v3_mla_bf16", "kvds")
i70 = claim("intensity_70b", fpp * p70 / kv70, note="FLOP per cached byte")
i8 = claim("intensity_8b", fpp * p8 / kv8, note="FLOP per cached byte")
ids = claim("intensity_dsv3", fpp * ds_active / kvds, note="FLOP per cached byte")

# %% [markdown]
# ## Link side: FLOPs the GPU could do while a byte arrives

# %%
link_pcie = claim("link_ratio_pcie", F * 1e12 / (pcie * 1e9))
link_nic = claim("link_ratio_nic", F * 1e12 / (nic_gbs * 1e9))
link_ssd = claim("link_ratio_ssd", F * 1e12 / (ssd * 1e9))
win70_pcie = claim("fetch_win_70b_pcie", i70 / link_pcie, unit="x")
win70_nic = claim("fetch_win_70b_nic", i70 / link_nic, unit="x")
win8_pcie = claim("fetch_win_8b_pcie", i8 / link_pcie, unit="x")
win8_ssd = claim("fetch_win_8b_ssd", i8 / link_ssd, unit="x")
winds_nic = claim("fetch_win_dsv3_nic", ids / link_nic, unit="x")
t_recompute_70 = claim("recompute_us_per_token_70b", fpp * p70 / (F * 1e12) * 1e6, unit="us")
t_fetch_70 = claim("fetch_us_per_token_70b_pcie", kv70 / (pcie * 1e9) * 1e6, unit="us")
check(win70_pcie > 20, "fetching a 70B prefix over PCIe beats recompute by over 20x")
print(
    f"intensity 70B {i70:,.0f}, 8B {i8:,.0f}, DSV3 {ids:,.0f} FLOP/B; links pcie {link_pcie:,.0f}, "
    f"nic {link_nic:,.0f}, ssd {link_ssd:,.0f}"
)
print(
    f"win 70B pcie {win70_pcie:.1f}x nic {win70_nic:.1f}x; 8B pcie {win8_pcie:.1f}x ssd {win8_ssd:.2f}x; "
    f"DSV3 nic {winds_nic:.0f}x"
)
print(f"70B per token: recompute {t_recompute_70:.1f} us, fetch {t_fetch_70:.2f} us")

# %% [markdown]
# ## Where fetching loses (1): the break-even bandwidth, and a shared SSD

# %%
be70 = claim("breakeven_bw_70b", F * 1e12 / i70, unit="B/s")
be8 = claim("breakeven_bw_8b", F * 1e12 / i8, unit="B/s")
ssd_share = claim("ssd_per_gpu_shared", ssd / gpus_node, unit="GB/s")
check(ssd_share * 1e9 < be70, "one x4 SSD shared by 8 GPUs is below the 70B break-even")
print(f"break-even 70B {be70 / 1e9:.2f} GB/s, 8B {be8 / 1e9:.2f} GB/s; SSD per GPU if shared {ssd_share:.2f} GB/s")

# %% [markdown]
# ## Where fetching loses (3): recompute that rides a memory-bound decode step
# A decode step of the 70B model at TP8 reads 2P/8 bytes of weights per GPU; the tensor cores could do
# F x (that time) FLOPs meanwhile. Tokens of prefill that fit in that slack: F/BW_hbm x (weight bytes / 2P) = ridge.

# %%
ridge = claim("h100_ridge", F * 1e12 / (hbm_bw * 1e12), note="FLOP per HBM byte")
t_step = claim("decode_step_ms", (p70 * bf16 / gpus_node) / (hbm_bw * 1e12) * 1e3, unit="ms")
free_tokens = claim("free_prefill_tokens_per_step", (F * 1e12 * t_step / 1e3) / (fpp * p70 / gpus_node), unit="tokens")
check(abs(free_tokens - ridge) < 1e-6, "with BF16 weights the free tokens per step equal the ridge point")
print(f"ridge {ridge:.0f} FLOP/B; step {t_step:.2f} ms; free prefill tokens {free_tokens:.0f}")

# %% [markdown]
# ## Long prefixes tilt further to fetch: attention FLOPs at 32K
# Causal attention adds about 2 x layers x d_model x n FLOPs per token at prefix length n (QK^T and PV).

# %%
n32k = given("prefix_32k", 32768, unit="tokens", source="example prefix length, 32K = 2^15")
attn_extra = claim("attention_share_32k", (2 * layers * d_model * n32k) / (fpp * p70), unit="fraction")
print(f"attention adds {attn_extra:.0%} to recompute per token at 32K")
w_gpu = claim("weights_per_gpu_tp8", p70 * bf16 / gpus_node, unit="B")
mfu = given("mfu_assumed", 1.0, unit="fraction", source="pricing assumption: recompute at the full dense rate")
