"""FP8 (E4M3, the OCP 'fn' variant: max 448, no infinities) KV quantise and dequantise in Triton.

quantise: x [T, C] (C = H_kv * D of one token) float32 -> codes [T, C] uint8 and scales. Two scale
granularities: per token (dynamic: scale = amax(|x_t|) / 448, so a token can never saturate) and per
channel (static, calibrated ahead: scale[c], so a value past 448 * scale[c] saturates). Values are
clamped to +-448 before encoding; without the clamp the result depends on the converter (PyTorch's
float8_e4m3fn cast saturates; a bit-level encoder or another converter may wrap or return NaN, which
poisons every attention score that touches the token).

The encoder is written with integer operations (round to nearest even, subnormals, the carry from
mantissa into exponent) instead of x.to(tl.float8e4nv): on a GPU that cast is one cvt instruction, but
the Triton 3.9 interpreter rounds it wrongly (31.6 -> 16), and the check must mean the same on both
paths. dequantise rebuilds the float32 bits of each code and multiplies by the scale.
"""

import torch
import triton
import triton.language as tl

E4M3_MAX = 448.0


@triton.jit
def _encode_e4m3(y):
    """float32 already clamped to [-448, 448] -> E4M3 codes (int32 0..255), round to nearest even."""
    bits = y.to(tl.int32, bitcast=True)
    sign = (bits >> 31) & 1
    mag = bits & 0x7FFFFFFF
    # normal range (|y| >= 2**-6): keep 3 mantissa bits of float32, RNE; a carry moves into the exponent
    rounded = (mag + 0x7FFFF + ((mag >> 20) & 1)) >> 20
    normal = rounded - ((127 - 7) << 3)
    # subnormal range: |y| / 2**-9 rounded to nearest even (8 rolls over into the smallest normal)
    s = tl.abs(y) * 512.0
    fl = s.to(tl.int32)
    frac = s - fl.to(tl.float32)
    sub = fl + tl.where((frac > 0.5) | ((frac == 0.5) & ((fl & 1) == 1)), 1, 0)
    code = tl.where(mag >= 0x3C800000, normal, sub)  # 0x3C800000 is 2**-6 in float32
    return code | (sign << 7)


@triton.jit
def fp8_quant_kernel(
    x_ptr, scale_ptr, code_ptr, n_cols, PER_TOKEN: tl.constexpr, BLOCK_C: tl.constexpr, CLAMP: tl.constexpr
):
    t = tl.program_id(0)
    c = tl.arange(0, BLOCK_C)
    live = c < n_cols
    x = tl.load(x_ptr + t * n_cols + c, mask=live, other=0.0).to(tl.float32)
    if PER_TOKEN:
        amax = tl.max(tl.abs(x), axis=0)
        scale = tl.where(amax > 0, amax / 448.0, 1.0)
        tl.store(scale_ptr + t, scale)
        y = tl.div_rn(x, scale)
    else:
        y = tl.div_rn(x, tl.load(scale_ptr + c, mask=live, other=1.0))
    if CLAMP:
        y = tl.minimum(tl.maximum(y, -448.0), 448.0)
    tl.store(code_ptr + t * n_cols + c, _encode_e4m3(y).to(tl.uint8), mask=live)


@triton.jit
def fp8_dequant_kernel(code_ptr, scale_ptr, out_ptr, n_cols, PER_TOKEN: tl.constexpr, BLOCK_C: tl.constexpr):
    t = tl.program_id(0)
    c = tl.arange(0, BLOCK_C)
    live = c < n_cols
    code = tl.load(code_ptr + t * n_cols + c, mask=live, other=0).to(tl.int32)
    e = (code >> 3) & 0xF
    m = code & 7
    normal = ((e + (127 - 7)) << 23 | (m << 20)).to(tl.float32, bitcast=True)
    mag = tl.where(e == 0, m.to(tl.float32) * 0.001953125, normal)  # subnormal: m * 2**-9
    val = tl.where((code & 0x80) != 0, -mag, mag)
    if PER_TOKEN:
        scale = tl.load(scale_ptr + t)
    else:
        scale = tl.load(scale_ptr + c, mask=live, other=1.0)
    tl.store(out_ptr + t * n_cols + c, val * scale, mask=live)


def quantize_per_token(x, clamp=True):
    """x [T, C] float32 -> (codes [T, C] uint8, scales [T] float32)."""
    t, c = x.shape
    codes = torch.empty(t, c, dtype=torch.uint8, device=x.device)
    scales = torch.empty(t, dtype=torch.float32, device=x.device)
    fp8_quant_kernel[(t,)](x.contiguous(), scales, codes, c, PER_TOKEN=True, BLOCK_C=triton.next_power_of_2(c), CLAMP=clamp)
    return codes, scales


def quantize_per_channel(x, scales, clamp=True):
    """x [T, C] float32, static scales [C] float32 -> codes [T, C] uint8."""
    t, c = x.shape
    codes = torch.empty(t, c, dtype=torch.uint8, device=x.device)
    fp8_quant_kernel[(t,)](
        x.contiguous(), scales.contiguous(), codes, c, PER_TOKEN=False, BLOCK_C=triton.next_power_of_2(c), CLAMP=clamp
    )
    return codes


def quantize_per_channel_unclamped(x, scales):
    """The deliberately broken launch: no clamp before encoding, so out-of-range values wrap."""
    return quantize_per_channel(x, scales, clamp=False)


def dequantize(codes, scales, per_token):
    """codes [T, C] uint8 with scales [T] (per token) or [C] (per channel) -> float32 [T, C]."""
    t, c = codes.shape
    out = torch.empty(t, c, dtype=torch.float32, device=codes.device)
    fp8_dequant_kernel[(t,)](
        codes.contiguous(), scales.contiguous(), out, c, PER_TOKEN=per_token, BLOCK_C=triton.next_power_of_2(c)
    )
    return out


def quantize_per_token_reference(x):
    """PyTorch: the same scale, the clamp, and torch.float8_e4m3fn's own rounding, as uint8 codes."""
    amax = x.abs().amax(dim=1)
    scales = torch.where(amax > 0, amax / E4M3_MAX, torch.ones_like(amax))
    y = (x / scales[:, None]).clamp(-E4M3_MAX, E4M3_MAX)
    return y.to(torch.float8_e4m3fn).view(torch.uint8), scales


def quantize_per_channel_reference(x, scales):
    y = (x / scales[None, :]).clamp(-E4M3_MAX, E4M3_MAX)
    return y.to(torch.float8_e4m3fn).view(torch.uint8)


def dequantize_reference(codes, scales, per_token):
    vals = codes.view(torch.float8_e4m3fn).to(torch.float32)
    return vals * (scales[:, None] if per_token else scales[None, :])
