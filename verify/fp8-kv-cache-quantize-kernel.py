# %% [markdown]
# # FP8 E4M3 KV quantise and dequantise kernels
# E4M3 ('fn' variant of the OCP 8-bit floating point specification; Micikevicius et al., "FP8 Formats
# for Deep Learning", arXiv:2209.05433 §3 Table 1): 1 sign, 4 exponent (bias 7), 3 mantissa bits, no
# infinities, largest finite 448, smallest normal 2^-6, smallest subnormal 2^-9. The kernels
# (verify/_lib/fp8_kv_kernel.py) encode with integer operations, round to nearest even, after a clamp to
# +-448; PyTorch's float8_e4m3fn cast is the reference.

# %%
import torch
import triton
import triton.language as tl
from fp8_kv_kernel import (
    dequantize,
    dequantize_reference,
    quantize_per_channel,
    quantize_per_channel_reference,
    quantize_per_channel_unclamped,
    quantize_per_token,
    quantize_per_token_reference,
)

from qbank.verify import check, claim, device, fact, given, triton_check

e4m3_max = given("e4m3_max", 448, source="arXiv:2209.05433 §3 Table 1 (E4M3 max normal 448); OCP OFP8 spec v1.0")
mant_bits = given("e4m3_mantissa_bits", 3, source="arXiv:2209.05433 §3 Table 1")
given("e4m3_exponent_bits", 4, source="arXiv:2209.05433 §3 Table 1")
given("e4m3_exponent_bias", 7, source="arXiv:2209.05433 §3 Table 1")
fi = torch.finfo(torch.float8_e4m3fn)
check(fi.max == e4m3_max and fi.smallest_normal == 2**-6, "torch.float8_e4m3fn has E4M3's range")
rel_half_ulp = claim("relative_rounding_bound", 2.0 ** -(mant_bits + 1), unit="fraction")
normal_range = claim("normal_dynamic_range", e4m3_max / fi.smallest_normal, unit="x")
check(float(torch.tensor([1000.0]).to(torch.float8_e4m3fn).float()) == e4m3_max,
      "PyTorch's cast saturates an out-of-range value at 448")

# %% [markdown]
# ## Why the encoder is integer code, not `x.to(tl.float8e4nv)`
# Compiled on a GPU that cast is one conversion instruction. Through Triton's interpreter, where every build
# runs these kernels, it misrounds a value whose mantissa carries into the exponent: 31.6 should become 32.
# Checked on the interpreter path only; if a Triton upgrade fixes it, this check fails and the prose goes.


# %%
@triton.jit
def _cast_e4m3(x_ptr, o_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(o_ptr + i, tl.load(x_ptr + i).to(tl.float8e4nv).to(tl.float32))


if device() != "cuda":
    carry = torch.tensor([31.6, 15.5])  # both round up into the next binade: 32 and 16
    cast = torch.empty_like(carry)
    _cast_e4m3[(1,)](carry, cast, N=2)
    check(not torch.equal(cast, carry.to(torch.float8_e4m3fn).float()),
          "Triton's interpreter misrounds the float8e4nv cast on a mantissa carry")

# %% [markdown]
# ## The kernels against PyTorch: every code, every rounding tie, per-token and per-channel scales

# %%
codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
grid = torch.sort(codes[(codes & 0x7F) != 0x7F].view(torch.float8_e4m3fn).float()).values
mids = (grid[1:] + grid[:-1]) / 2
every = torch.stack([torch.cat([grid, grid[:1]]), torch.cat([mids, mids[:2]])])
ones = torch.ones(every.shape[1])
n_codes = claim("finite_codes", grid.numel(), unit="elements")
triton_check("fp8_encode_every_code_and_tie", quantize_per_channel, quantize_per_channel_reference, every, ones,
             bytes_moved=every.numel() * 5 + ones.numel() * 4)

g = torch.Generator().manual_seed(6)
toy_tokens = int(given("toy_tokens", 8, unit="tokens", source="toy shape for the interpreter check"))
toy_cols = int(given("toy_cols", 64, unit="dims", source="toy shape: H_kv * D of one token"))
x = torch.randn(toy_tokens, toy_cols, generator=g) * torch.logspace(-4, 3, toy_tokens)[:, None]
x[3] = 0.0  # an all-zero token: scale 1, no division by zero
triton_check("fp8_quantize_per_token", quantize_per_token, quantize_per_token_reference, x,
             bytes_moved=x.numel() * 5 + toy_tokens * 4)
q_codes, q_scales = quantize_per_token_reference(x)
triton_check("fp8_dequantize_per_token", dequantize, dequantize_reference, q_codes, q_scales, True,
             bytes_moved=q_codes.numel() * 5 + toy_tokens * 4)
back = dequantize_reference(q_codes, q_scales, True)
worst = claim("per_token_worst_error_vs_amax",
              float(((back - x).abs() / x.abs().amax(1, keepdim=True).clamp(min=1e-30)).max()), unit="fraction")
check(worst <= rel_half_ulp, "per-token scales: every error within half an ulp of the token's largest value")

calibrated = given("calibrated_amax", 4.48, source="toy calibration: the largest |x| seen per channel ahead of time")
ch_scales = torch.full((toy_cols,), calibrated / e4m3_max)
hot = torch.randn(4, toy_cols, generator=g) * 10  # most values past the calibrated range
triton_check("fp8_quantize_per_channel_saturating", quantize_per_channel, quantize_per_channel_reference, hot,
             ch_scales, bytes_moved=hot.numel() * 5 + toy_cols * 4)
triton_check("fp8_quantize_unclamped", quantize_per_channel_unclamped, quantize_per_channel_reference, hot, ch_scales,
             expect_mismatch=True)
sat_frac = claim("saturated_fraction_toy", float((hot.abs() > calibrated).float().mean()), unit="fraction")

# %% [markdown]
# ## What a value past the range becomes
# Clamped: it saturates at 448 * scale, losing (v - range) / v. Unclamped, the integer encoder's
# exponent field overflows into the sign bit: twice the range turns into a tiny negative number.

# %%
overshoot = given("overshoot", 2, unit="x", source="example: a value at twice the calibrated range")
v = torch.tensor([[overshoot * calibrated]])
one_scale = torch.tensor([calibrated / e4m3_max])
clipped = float(dequantize_reference(quantize_per_channel_reference(v, one_scale), one_scale, False))
on = "cuda" if device() == "cuda" and torch.cuda.is_available() else "cpu"  # a compiled kernel needs GPU tensors
wrapped_codes = quantize_per_channel_unclamped(v.to(on), one_scale.to(on)).cpu()
wrapped = float(dequantize_reference(wrapped_codes, one_scale, False))
clip_err = claim("clip_error_at_overshoot", (float(v) - clipped) / float(v), unit="fraction")
wrapped_val = claim("unclamped_magnitude_at_overshoot", abs(wrapped))
check(abs(clipped - calibrated) < 1e-6 and wrapped < 0, "clamped: saturates at the range; unclamped: the sign flips")

# %% [markdown]
# ## A token with an outlier channel: FP8 per-token against INT8 per-token
# One channel 100x the others; the scale follows the outlier. FP8's exponent keeps the small channels
# at their own relative precision; INT8's uniform grid gives them a few levels.

# %%
outlier = given("outlier_ratio", 100, unit="x", source="example outlier channel, 100x the token's other channels")
tok = torch.randn(1, 1024, generator=g)
tok[0, 7] = outlier * tok.abs().max()
c8, s8 = quantize_per_token_reference(tok)
fp8_back = dequantize_reference(c8, s8, True)
int8_levels = given("int8_levels", 127, unit="steps", source="symmetric INT8: codes -127..127 per side")
int8_scale = tok.abs().max() / int8_levels
int8_back = torch.round(tok / int8_scale).clamp(-int8_levels, int8_levels) * int8_scale
rest = torch.ones(1024, dtype=torch.bool)
rest[7] = False
rms = tok[0, rest].pow(2).mean().sqrt()
fp8_err = claim("fp8_rel_rms_error_rest", float((fp8_back - tok)[0, rest].pow(2).mean().sqrt() / rms), unit="fraction")
int8_err = claim("int8_rel_rms_error_rest", float((int8_back - tok)[0, rest].pow(2).mean().sqrt() / rms), unit="fraction")
check(int8_err > 5 * fp8_err, "the outlier costs INT8 far more than FP8")

# %% [markdown]
# ## Bytes for Llama-3.1-70B: the cache and the scales

# %%
layers = fact("llama3_1_70b.num_hidden_layers", "layers")
kv_heads = fact("llama3_1_70b.num_key_value_heads", "kv_heads")
head_dim = fact("llama3_1_70b.head_dim", "head_dim")
bf16 = given("bf16_bytes", 2, unit="B", source="bf16 stores 2 bytes per value")
fp8 = given("fp8_bytes", 1, unit="B", source="E4M3 stores 1 byte per value")
f32 = given("scale_bytes", 4, unit="B", source="scales kept in float32")
ctx = given("context_tokens", 32768, unit="tokens", source="example long context")
bf16_tok = claim("bf16_bytes_per_token", 2 * layers * kv_heads * head_dim * bf16, unit="B")
fp8_tok = claim("fp8_bytes_per_token", 2 * layers * kv_heads * head_dim * fp8, unit="B")
per_token_scale = claim("per_token_scale_bytes", 2 * layers * f32, unit="B")
per_head_scale = claim("per_token_head_scale_bytes", 2 * layers * kv_heads * f32, unit="B")
per_channel_total = claim("per_channel_scale_bytes_model", 2 * layers * kv_heads * head_dim * f32, unit="B")
claim("per_token_scale_overhead", per_token_scale / fp8_tok, unit="fraction")
claim("per_token_head_scale_overhead", per_head_scale / fp8_tok, unit="fraction")
step_bf16 = claim("step_read_bf16", ctx * bf16_tok, unit="B")
step_fp8 = claim("step_read_fp8_per_head_scales", ctx * (fp8_tok + per_head_scale), unit="B")
claim("step_read_ratio", step_fp8 / step_bf16, unit="fraction")

# %% [markdown]
# ## The write kernel at the size that is timed on a GPU
# Compiled on a GPU, this check quantises a prefill chunk's keys for one layer of Llama-3.1-70B on one
# GPU, 8192 tokens of 8 KV heads x 128 dims, per-token scales; the interpreter gets 4 toy tokens.

# %%
on_gpu = device() == "cuda" and torch.cuda.is_available()
timed_tokens = given("timed_prefill_tokens", 8192, unit="tokens", source="example prefill chunk, timed on a GPU only")
tok_t, cols_t = (int(timed_tokens), int(kv_heads * head_dim)) if on_gpu else (4, toy_cols)
timed = torch.randn(tok_t, cols_t, generator=g)
triton_check("fp8_quantize_per_token_batch", quantize_per_token, quantize_per_token_reference, timed,
             bytes_moved=tok_t * cols_t * 5 + tok_t * 4)
print(rel_half_ulp, normal_range, n_codes, worst, sat_frac, clip_err, wrapped_val, fp8_err, int8_err, step_fp8)
