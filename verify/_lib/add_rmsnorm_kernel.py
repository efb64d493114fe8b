"""Fused residual add + RMSNorm, the op between the sublayers of a Llama decoder layer.

Rounding order of vLLM's fused_add_rms_norm (csrc/layernorm_kernels.cu @c6691785, generic kernel):
z = x + residual is rounded to the activation dtype and becomes the new residual; the mean square is taken
from that rounded z in float32; z * rsqrt(mean + eps) is rounded to the activation dtype and then multiplied
by the weight in that dtype (a second rounding). One program per token holds the whole row: BLOCK is the
hidden size rounded up to a power of two (4,096 for Llama-3.1-8B: 16 values per thread at 8 warps).

The kernel rounds float32 to bf16 itself (round to nearest, ties to even, on the bit pattern) and keeps bf16
values in float32 registers, because Triton's interpreter (triton/runtime/interpreter.py, `cast_impl` ->
`_convert_float` with no rounding mode) truncates a plain float32 -> bf16 cast where the compiled kernel
rounds to nearest: with the explicit rounding both paths give the same bits. For the same reason the scale is
taken with tl.sqrt_rn and tl.div_rn (IEEE round-to-nearest on both paths) rather than tl.sqrt and `/`, which
compile to approximate instructions on a GPU. What still differs on a GPU is the order of tl.sum's float32
reduction, which can move the mean square by an ulp and flip a bf16 rounding in a rare element.

Registers: the launch keeps 16 values per thread (num_warps = BLOCK / 512, at least 8 and at most 32), so
a Llama-3.1-405B row of 16,384 takes 32 warps instead of 64 live values per thread per tensor, which would
spill past the 255-register limit.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def round_bf16(v):
    """float32 -> the nearest bf16 value (ties to even), still held as a float32."""
    b = v.to(tl.uint32, bitcast=True)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return b.to(tl.float32, bitcast=True)


@triton.jit
def add_rmsnorm_kernel(
    x_ptr, res_ptr, w_ptr, out_ptr, res_out_ptr, hidden, eps, BLOCK: tl.constexpr, BUG: tl.constexpr
):
    row = tl.program_id(0).to(tl.int64) * hidden
    c = tl.arange(0, BLOCK)
    live = c < hidden
    x = tl.load(x_ptr + row + c, mask=live, other=0.0)
    r = tl.load(res_ptr + row + c, mask=live, other=0.0)
    zf = round_bf16(x.to(tl.float32) + r.to(tl.float32))  # the new residual, rounded like the engine's
    tl.store(res_out_ptr + row + c, zf.to(res_out_ptr.dtype.element_ty), mask=live)  # exact: zf is a bf16 value
    if BUG == 1:  # deliberately wrong: the mean square of the input alone, before the residual add
        zf_sq = x.to(tl.float32) * x.to(tl.float32)
    else:
        zf_sq = zf * zf
    ms = tl.sum(zf_sq, axis=0) / hidden
    if BUG == 2:  # deliberately wrong: no epsilon, which a zero row turns into 0 * inf
        inv = tl.div_rn(1.0, tl.sqrt_rn(ms))
    else:
        # IEEE-rounded sqrt and divide, as torch computes rsqrt on a CPU: tl.sqrt and `/` compile to the
        # approximate sqrt.approx / div.full instructions on a GPU, which the interpreter (numpy) does not model
        inv = tl.div_rn(1.0, tl.sqrt_rn(ms + eps))
    w = tl.load(w_ptr + c, mask=live, other=0.0).to(tl.float32)
    y = round_bf16(round_bf16(zf * inv) * w)  # round the normalised value, then the product with the weight
    tl.store(out_ptr + row + c, y.to(out_ptr.dtype.element_ty), mask=live)


def warps_for(block):
    """16 values per thread per tensor: 8 warps at 4,096, 16 at 8,192, 32 (the 1,024-thread cap) at 16,384."""
    return max(8, min(32, block // 512))


def add_rmsnorm(x, residual, weight, eps, bug=0):
    """x, residual [T, H], weight [H] -> (out, new residual), both in x's dtype."""
    t, h = x.shape
    out = torch.empty_like(x)
    res_out = torch.empty_like(x)
    add_rmsnorm_kernel[(t,)](
        x.contiguous(),
        residual.contiguous(),
        weight.contiguous(),
        out,
        res_out,
        h,
        eps,
        BLOCK=triton.next_power_of_2(h),
        BUG=bug,
        num_warps=warps_for(triton.next_power_of_2(h)),
    )
    return out, res_out


def add_rmsnorm_no_eps(x, residual, weight, eps):
    """The deliberately broken launch that drops epsilon."""
    return add_rmsnorm(x, residual, weight, eps, bug=2)


def add_rmsnorm_input_variance(x, residual, weight, eps):
    """The deliberately broken launch that takes the mean square before the residual add."""
    return add_rmsnorm(x, residual, weight, eps, bug=1)


def add_rmsnorm_reference(x, residual, weight, eps):
    """PyTorch in the engine's rounding order: round the sum, normalise in float32, round, times the weight."""
    z = (x.float() + residual.float()).to(x.dtype)
    zf = z.float()
    inv = torch.rsqrt(zf.pow(2).mean(dim=-1, keepdim=True) + eps)
    y = ((zf * inv).to(x.dtype).float() * weight.float()).to(x.dtype)
    return y, z


def add_rmsnorm_fp32_once(x, residual, weight, eps):
    """The other defensible order: everything in float32, one rounding at the end."""
    zf = x.float() + residual.float()
    inv = torch.rsqrt(zf.pow(2).mean(dim=-1, keepdim=True) + eps)
    return (zf * inv * weight.float()).to(x.dtype), zf.to(x.dtype)


def add_rmsnorm_exact(x, residual, weight, eps):
    """The float64 ground truth of the output."""
    zd = x.double() + residual.double()
    return zd * torch.rsqrt(zd.pow(2).mean(dim=-1, keepdim=True) + eps) * weight.double()


def ulps(a, b):
    """|a - b| in units of the bf16 spacing at b's magnitude (float64 arithmetic)."""
    spacing = torch.finfo(torch.bfloat16).eps * torch.exp2(torch.floor(torch.log2(b.double().abs().clamp_min(1e-30))))
    return (a.double() - b.double()).abs() / spacing


def fused_bytes(tokens, hidden, itemsize):
    """Read x and the residual, write the new residual and the output (the weight is read once per program
    and stays in cache): 4 * T * H elements."""
    return 4 * tokens * hidden * itemsize


def unfused_bytes(tokens, hidden, itemsize):
    """An add kernel (read 2, write 1) then an RMSNorm kernel that reads its input twice, as vLLM's rms_norm
    kernel does (two loops over the row), and writes once: 6 * T * H elements."""
    return 6 * tokens * hidden * itemsize
