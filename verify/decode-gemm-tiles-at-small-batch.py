# %% [markdown]
# # Decode GEMMs on Hopper: M-padding to the wgmma shape, tile counts against 132 SMs, split-K
# Llama-3.1-8B's per-layer projections (facts.yaml) in bf16 on one H100 SXM, at decode batch M. Hopper's
# warpgroup MMA for bf16 has a fixed M of 64 and N from 8 to 256 in steps of 8 (CUTLASS CuTe DSL docs,
# cutlass.cute.nvgpu.warpgroup.MmaF16BF16Op: "Mma-M = 64", "8 <= Mma-N <= 256, step 8",
# docs.nvidia.com/cutlass/4.6.0/media/docs/pythonDSL/cute_dsl_api/cute_nvgpu_warpgroup.html).

# %%
import math

import torch

from qbank.verify import check, claim, fact, given

d = fact("llama3_1_8b.hidden_size", "hidden")
heads = fact("llama3_1_8b.num_attention_heads", "q_heads")
kvh = fact("llama3_1_8b.num_key_value_heads", "kv_heads")
hd = fact("llama3_1_8b.head_dim", "head_dim")
ffn = fact("llama3_1_8b.intermediate_size", "ffn")
vocab = fact("llama3_1_8b.vocab_size", "vocab")
bw = fact("h100_sxm.hbm_bandwidth", "hbm_bw") * 1e12
peak = fact("h100_sxm.bf16_dense", "bf16_peak") * 1e12
mma_m = given("wgmma_m", 64, unit="tokens", source="CUTLASS CuTe DSL warpgroup MmaF16BF16Op: Mma-M = 64")
given("wgmma_n_min", 8, unit="dims", source="CUTLASS CuTe DSL warpgroup MmaF16BF16Op: 8 <= Mma-N")
given("wgmma_n_max", 256, unit="dims", source="CUTLASS CuTe DSL warpgroup MmaF16BF16Op: Mma-N <= 256")
mma_n_step = given("wgmma_n_step", 8, unit="tokens", source="CUTLASS CuTe DSL warpgroup MmaF16BF16Op: N step 8")
sms = given(
    "h100_sms", 132, unit="SMs",
    source="CUDA deviceQuery, H100 80GB HBM3: '(132) Multiprocessors' "
    "(github:thamada/nvidia-smi nvsim/H100SXMx8_deviceQuery.py @03fbe6e6)",
)
bn = given(
    "tile_n", 128, unit="dims", source="the question's hypothetical output tile width per CTA (a common CUTLASS tile)"
)
bf16 = given("bf16_bytes", 2, unit="B", source="bf16 stores 2 bytes per value")

gemms = {  # name: (N, K), per layer except the lm_head
    "qkv": ((heads + 2 * kvh) * hd, d),
    "o": (heads * hd, d),
    "gate_up": (2 * ffn, d),
    "down": (d, ffn),
    "lm_head": (vocab, d),
}

# %% [markdown]
# ## Padding M to the instruction: free while the GEMM is memory-bound
# A GEMM with M tokens reads its N x K weights once (2 bytes each) and does 2 M N K FLOPs. Padded to the
# instruction's 64 rows, the tensor cores do the work of 64 rows whatever M is.

# %%
batch_small = given(
    "batch_small", 8, unit="tokens", source="the question's hypothetical decode batch, one token per request"
)
claim("pad_waste_m8", 1 - batch_small / mma_m, unit="fraction")
claim("pad_waste_m8_swapped", 1 - batch_small / (math.ceil(batch_small / mma_n_step) * mma_n_step), unit="fraction")
n_qkv, k_qkv = gemms["qkv"]
claim("qkv_n", n_qkv, unit="dims")
mem_qkv = claim("qkv_memory_seconds", n_qkv * k_qkv * bf16 / bw, unit="s")
cmp_qkv = claim("qkv_compute_seconds_padded", 2 * mma_m * n_qkv * k_qkv / peak, unit="s")
claim("qkv_compute_over_memory_padded", cmp_qkv / mem_qkv, unit="fraction")
fpw = given("flop_per_weight_token", 2, unit="FLOP", source="one multiply-add per weight per token")
ridge = claim("ridge_tokens", peak / bw * bf16 / fpw, unit="tokens")

# %% [markdown]
# ## Where padding stops being free
# Time of a weight-bound GEMM at M tokens with M padded to a multiple of the tile's M, relative to reading
# the weights: max(1, padded M / ridge).


# %%
def rel_time(m: int, tile_m: int) -> float:
    return max(1.0, math.ceil(m / tile_m) * tile_m / ridge)


b256 = given("batch_256", 256, unit="tokens", source="the question's hypothetical batch, just under the ridge")
b257 = given("batch_257", 257, unit="tokens", source="the question's hypothetical batch, one more request")
bm128 = given("tile_m_large", 128, unit="tokens", source="the question's hypothetical 128-row tile")
claim("padded_m_257_tile64", math.ceil(b257 / mma_m) * mma_m, unit="tokens")
claim("padded_m_257_tile128", math.ceil(b257 / bm128) * bm128, unit="tokens")
claim("slowdown_257_tile64", rel_time(int(b257), int(mma_m)) / rel_time(int(b256), int(mma_m)) - 1, unit="fraction")
claim("slowdown_257_tile128", rel_time(int(b257), int(bm128)) / rel_time(int(b256), int(bm128)) - 1, unit="fraction")
claim("tokens_gained_257", b257 / b256 - 1, unit="fraction")
check(rel_time(int(b256), int(mma_m)) == 1.0, "256 tokens are still weight-bound")

# %% [markdown]
# ## Tiles against SMs at small M (one M tile): how much of the GPU a GEMM launches on

# %%
for name, (n, k) in gemms.items():
    tiles = math.ceil(n / bn)
    waves = math.ceil(tiles / sms)
    claim(f"tiles_{name}", tiles, unit="blocks")
    claim(f"busy_{name}", tiles / (waves * sms), unit="fraction")
    claim(f"weights_{name}", n * k * bf16, unit="B")

# %% [markdown]
# ## Split-K for the down projection
# Split K into s slices: s times the CTAs, and s fp32 partial outputs of M x N written and read back.

# %%
n_dn, k_dn = gemms["down"]
tiles_dn = math.ceil(n_dn / bn)
split = max(s for s in range(1, 9) if tiles_dn * s <= sms)
claim("split_k_down", split, unit="chunks")
claim("ctas_down_split", tiles_dn * split, unit="blocks")
claim("busy_down_split", tiles_dn * split / sms, unit="fraction")
fp32 = given("fp32_bytes", 4, unit="B", source="fp32 partial sums, 4 bytes each")
b64 = given("batch_64", 64, unit="tokens", source="the question's hypothetical larger decode batch")
for m in (int(batch_small), int(b64)):
    partial = split * m * n_dn * fp32 * 2
    claim(f"splitk_partial_bytes_m{m}", partial, unit="B")
    claim(f"splitk_overhead_m{m}", partial / (n_dn * k_dn * bf16), unit="fraction")

# %% [markdown]
# ## The split-K reference: the partial sums reproduce the product
# A PyTorch reference of split-K at a small shape: bf16 inputs, fp32 partial products over K slices, summed.

# %%
g = torch.Generator().manual_seed(0)
x = torch.randn(8, 512, generator=g).to(torch.bfloat16)
w = torch.randn(512, 256, generator=g).to(torch.bfloat16)
full = x.float() @ w.float()
parts = sum(x[:, i : i + 128].float() @ w[i : i + 128].float() for i in range(0, 512, 128))
err = float((parts - full).abs().max() / full.abs().max())
claim("splitk_rel_error", err)
check(err < 1e-5, "fp32 split-K partials reproduce the fp32-accumulated product")
print(ridge, {k: math.ceil(v[0] / bn) for k, v in gemms.items()}, split)
