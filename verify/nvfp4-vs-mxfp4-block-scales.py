# %% [markdown]
# # MXFP4 against NVFP4: two block-scaled FP4 formats, written out and measured
# Element format for both: FP4 E2M1, magnitudes {0, 0.5, 1, 1.5, 2, 3, 4, 6}.
# MXFP4 (OCP Microscaling Formats spec v1.0, 2023): 32 elements share an E8M0 (power-of-two) scale; the reference
# conversion (microsoft/microxcaling mx/mx_ops.py _quantize_mx) sets the shared exponent to
# floor(log2(amax)) - emax_elem with emax_elem = 2 for E2M1, and saturates elements at +-6.
# NVFP4 (NVIDIA, "Introducing NVFP4 for Efficient and Accurate Low-Precision Inference", 2025-06-24): 16 elements
# share an FP8 E4M3 scale, and an FP32 per-tensor scale puts the block scales into E4M3's range.
# gpt-oss ships its MoE weights in MXFP4 (openai/gpt-oss-120b README: "MXFP4 quantization of the MoE weights";
# vLLM loads them through vllm/model_executor/layers/quantization/mxfp4.py).
# The weights here are seeded synthetic data (Gaussian rows with a Student-t tail), the question's stand-in for a
# real layer: the script shows the mechanism and its size, a real checkpoint gives the real numbers.

# %%
import torch

from qbank.verify import check, claim, fact, given

E2M1 = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])
mx_block = given("mx_block", 32, unit="elements", source="OCP Microscaling Formats (MX) spec v1.0 §5: MXFP4 block size 32")
nv_block = given("nv_block", 16, unit="elements", source="NVIDIA NVFP4 blog (2025-06-24): 16-value micro-blocks")
scale_bits = given("scale_bits", 8, unit="bit", source="E8M0 (MXFP4) and E4M3 (NVFP4) block scales are one byte each")
elem_bits = given("elem_bits", 4, unit="bit", source="FP4 E2M1 elements")
emax_elem = given("e2m1_emax", 2, source="OCP MX v1.0: largest E2M1 exponent (6 = 1.5 x 2^2); microxcaling subtracts it")
e2m1_max = claim("e2m1_max", E2M1.max().item())
e4m3_max = given("e4m3_max", 448.0, source="FP8 E4M3 (fn) largest finite value; torch.finfo(torch.float8_e4m3fn).max")
demo_max = given("demo_max", 7.0, source="the hand-worked example block's largest element")


def e2m1_round(x: torch.Tensor) -> torch.Tensor:
    """Round to the nearest E2M1 value (ties to the even code), saturating at +-6."""
    mag = x.abs().clamp(max=6.0)
    dist = (mag.unsqueeze(-1) - E2M1).abs()
    best = dist.min(dim=-1, keepdim=True).values
    ties = dist == best
    codes = torch.arange(8)
    # among tied codes prefer the even one (mantissa bit 0)
    score = torch.where(ties, (codes % 2) * 1.0, torch.full_like(dist, 9.0))
    return torch.sign(x) * E2M1[score.argmin(dim=-1)]


def e4m3_round(x: torch.Tensor) -> torch.Tensor:
    """Round positive scales to FP8 E4M3 (PyTorch's own cast: nearest, ties to even, saturating)."""
    return x.to(torch.float8_e4m3fn).to(torch.float32)


def mxfp4(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(dequantized weights, fraction of elements saturated) under the OCP MXFP4 reference conversion."""
    blocks = w.reshape(-1, int(mx_block))
    amax = blocks.abs().amax(dim=1, keepdim=True)
    scale = torch.exp2(torch.floor(torch.log2(amax)) - emax_elem)
    scaled = blocks / scale
    saturated = (scaled.abs() > e2m1_max).float().mean()
    return (e2m1_round(scaled) * scale).reshape(w.shape), saturated


def nvfp4(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(dequantized weights, fraction saturated): E4M3 block scale amax/6 under an FP32 per-tensor scale."""
    blocks = w.reshape(-1, int(nv_block))
    amax = blocks.abs().amax(dim=1, keepdim=True)
    tensor_scale = amax.max() / (e2m1_max * e4m3_max)  # maps the largest block scale to E4M3's maximum
    block_scale = e4m3_round(amax / e2m1_max / tensor_scale) * tensor_scale
    scaled = blocks / block_scale
    saturated = (scaled.abs() > e2m1_max).float().mean()
    return (e2m1_round(scaled) * block_scale).reshape(w.shape), saturated


# %% [markdown]
# ## The reference, checked on values worked by hand

# %%
check(torch.equal(e2m1_round(torch.tensor([0.24, 0.26, 0.75, 2.5, 5.0, 7.0, -3.2])),
                  torch.tensor([0.0, 0.5, 1.0, 2.0, 4.0, 6.0, -3.0])), "E2M1 rounding: nearest, ties to even, saturating")
# a block whose max is 7: floor(log2 7) - 2 = 0, scale 1, so 7 saturates to 6 and loses 1/7 of itself
demo = torch.zeros(32)
demo[0], demo[1] = demo_max, 1.2
deq, sat = mxfp4(demo)
check(deq[0].item() == 6.0 and deq[1].item() == 1.0, "MXFP4: 7 saturates to 6, 1.2 rounds to 1")
claim("mx_demo_loss", (demo_max - deq[0].item()) / demo_max, unit="fraction")
worst = claim("mx_worst_saturation_loss", 1 - e2m1_max / 8.0, unit="fraction")  # amax/scale just under 8 -> 6
deq16, _ = nvfp4(torch.cat([demo[:16], demo[:16] * 0.01]))
check(abs(deq16[0].item() - 7.0) / 7.0 < 0.07, "NVFP4: the block max survives up to its E4M3 scale rounding")

# %% [markdown]
# ## Storage

# %%
mx_bits = claim("mxfp4_bits_per_element", elem_bits + scale_bits / mx_block, unit="bit")
nv_bits = claim("nvfp4_bits_per_element", elem_bits + scale_bits / nv_block, unit="bit")
params = given("gemm_params", 68451041280, unit="params", source="Llama-3.1-70B GEMM weights from the facts file's config "
               "(80 layers x (attention + 3 x 8192 x 28672)), as derived in the int4-weight-only-vs-fp8-w8a8 script")
claim("mxfp4_weights", params * mx_bits / 8, unit="B")
claim("nvfp4_weights", params * nv_bits / 8, unit="B")
fp4_pf = given("b200_fp4_dense", 9.0, unit="TFLOP/s", source="NVIDIA HGX B200 table: FP4 9 PFLOPS dense, 18 sparse "
               "(facts file b200_hgx.fp8_dense note); NVIDIA NVFP4 blog figure 1: B200 9/18 petaflops")
fp8_tf = fact("b200_hgx.fp8_dense", "b200_fp8_tflops")
claim("fp4_over_fp8_rate", fp4_pf * 1000 / fp8_tf, unit="x")

# %% [markdown]
# ## Error on a seeded weight matrix, and where each format breaks

# %%
g = torch.Generator().manual_seed(0)
rows = int(given("rows", 256, source="the question's seeded matrix: 256 rows"))
cols = int(given("cols", 1024, source="the question's seeded matrix: 1,024 columns"))
w = torch.randn(rows, cols, generator=g) * 0.02
# Student-t with 3 degrees of freedom from the seeded generator: a normal over sqrt(chi-square(3) / 3)
chi2 = torch.randn(3, rows, cols, generator=g).pow(2).sum(dim=0)
tail = torch.randn(rows, cols, generator=g) / (chi2 / 3).sqrt() * 0.02
mask = torch.rand(rows, cols, generator=g) < given("tail_fraction", 0.01, unit="fraction", source="the question's "
                                                  "hypothetical: 1% of weights drawn from a Student-t(3) tail")
w = torch.where(mask, tail, w)


def rel_rms(a: torch.Tensor, b: torch.Tensor) -> float:
    return ((a - b).pow(2).mean().sqrt() / b.pow(2).mean().sqrt()).item()


mx_w, mx_sat = mxfp4(w)
nv_w, nv_sat = nvfp4(w)
e_mx = claim("mxfp4_rel_rms", rel_rms(mx_w, w), unit="fraction")
e_nv = claim("nvfp4_rel_rms", rel_rms(nv_w, w), unit="fraction")
claim("mx_over_nv_error", e_mx / e_nv, unit="x")
claim("mxfp4_saturated", mx_sat.item(), unit="fraction")
claim("nvfp4_saturated", nv_sat.item(), unit="fraction")
check(e_nv < e_mx, "NVFP4's finer, non-power-of-two scales give the lower error")
zero_mx = claim("mxfp4_zeroed", ((mx_w == 0) & (w != 0)).float().mean().item(), unit="fraction")
zero_nv = claim("nvfp4_zeroed", ((nv_w == 0) & (w != 0)).float().mean().item(), unit="fraction")
# the two ingredients separately: NVFP4's block of 16 with a power-of-two scale, and a 32-block with an E4M3 scale
def mx_scaled(w: torch.Tensor, block: int) -> torch.Tensor:
    b = w.reshape(-1, block)
    s = torch.exp2(torch.floor(torch.log2(b.abs().amax(dim=1, keepdim=True))) - emax_elem)
    return (e2m1_round(b / s) * s).reshape(w.shape)


def nv_scaled(w: torch.Tensor, block: int) -> torch.Tensor:
    b = w.reshape(-1, block)
    amax = b.abs().amax(dim=1, keepdim=True)
    t = amax.max() / (e2m1_max * 448.0)
    s = e4m3_round(amax / e2m1_max / t) * t
    return (e2m1_round(b / s) * s).reshape(w.shape)


claim("pow2_scale_block16_rel_rms", rel_rms(mx_scaled(w, int(nv_block)), w), unit="fraction")
claim("e4m3_scale_block32_rel_rms", rel_rms(nv_scaled(w, int(mx_block)), w), unit="fraction")
print(f"MXFP4 {e_mx:.4f} (sat {mx_sat:.4%}, zeroed {zero_mx:.2%}); NVFP4 {e_nv:.4f} (sat {nv_sat:.4%}, zeroed {zero_nv:.2%})")

# %% [markdown]
# ## NVFP4's own clipping: a block scale rounded down
# Rounding amax/6 to the nearest E4M3 value rounds it down about half the time, and then the block's largest element
# lands above 6 and saturates. Rounding the scale up instead never clips, at the price of a slightly coarser grid.


# %%
def e4m3_round_up(x: torch.Tensor) -> torch.Tensor:
    """The smallest E4M3 value >= x (for positive x below 448)."""
    x = x.clamp(max=448.0)
    near = x.to(torch.float8_e4m3fn)
    up = (near.view(torch.uint8) + 1).view(torch.float8_e4m3fn)
    return torch.where(near.to(torch.float32) >= x, near.to(torch.float32), up.to(torch.float32))


b = w.reshape(-1, int(nv_block))
amax = b.abs().amax(dim=1, keepdim=True)
t = amax.max() / (e2m1_max * 448.0)
s_up = e4m3_round_up(amax / e2m1_max / t) * t
check(bool(((b / s_up).abs() <= e2m1_max + 1e-6).all()), "with the scale rounded up, nothing saturates")
nv_up = (e2m1_round(b / s_up) * s_up).reshape(w.shape)
claim("nvfp4_round_up_rel_rms", rel_rms(nv_up, w), unit="fraction")
blocks_clipped = claim("nvfp4_blocks_clipped", ((b / (e4m3_round(amax / e2m1_max / t) * t)).abs().amax(dim=1) > e2m1_max)
                       .float().mean().item(), unit="fraction")
claim("e4m3_half_step", 1 / 16, unit="fraction")  # 3 mantissa bits: relative step 1/8, half of it
claim("mx_grid_low", 2.0**emax_elem)  # amax / scale >= 2^emax
claim("mx_grid_high", 2.0 ** (emax_elem + 1))  # and < 2^(emax + 1)
claim("nv_error_reduction", 1 - e_nv / e_mx, unit="fraction")
check(torch.finfo(torch.float8_e4m3fn).max == e4m3_max, "E4M3's maximum is 448")
given("formats", 2, source="the question's two formats, MXFP4 and NVFP4")
given("scale_base", 2, source="E8M0 encodes 2^(e - 127): OCP MX v1.0")
claim("nv_bytes_overhead", nv_bits / mx_bits - 1, unit="fraction")
