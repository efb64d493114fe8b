"""Fused SiLU-and-mul, the activation of a gated MLP (Llama's SwiGLU): out = silu(gate) * up.

Input x [T, 2I] holds gate in columns [0, I) and up in [I, 2I), the layout of a merged gate_up
projection (vLLM's MergedColumnParallelLinear feeding SiluAndMul). One program per (token, column
block): read gate and up once, compute in float32, write out once. The unfused PyTorch expression
silu(x[:, :I]) * x[:, I:] writes silu's result to memory and reads it back.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def silu_mul_kernel(x_ptr, out_ptr, inter, BLOCK: tl.constexpr, SWAPPED: tl.constexpr):
    t = tl.program_id(0)
    c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    live = c < inter
    row = x_ptr + t.to(tl.int64) * 2 * inter
    gate = tl.load(row + c, mask=live, other=0.0).to(tl.float32)
    up = tl.load(row + inter + c, mask=live, other=0.0).to(tl.float32)
    if SWAPPED:  # the deliberately wrong layout: silu applied to the up half
        gate, up = up, gate
    y = gate * tl.sigmoid(gate) * up
    tl.store(out_ptr + t.to(tl.int64) * inter + c, y.to(out_ptr.dtype.element_ty), mask=live)


def silu_and_mul(x, block=128, swapped=False):
    """x [T, 2I] -> [T, I] in x's dtype."""
    t, two_i = x.shape
    inter = two_i // 2
    out = torch.empty(t, inter, dtype=x.dtype, device=x.device)
    silu_mul_kernel[(t, triton.cdiv(inter, block))](x.contiguous(), out, inter, BLOCK=block, SWAPPED=swapped)
    return out


def silu_and_mul_swapped(x):
    """The deliberately broken launch: gate and up halves exchanged."""
    return silu_and_mul(x, swapped=True)


def silu_and_mul_reference(x):
    """PyTorch, computed in float32 like the kernel, cast back to x's dtype."""
    inter = x.shape[1] // 2
    xf = x.float()
    return (torch.nn.functional.silu(xf[:, :inter]) * xf[:, inter:]).to(x.dtype)


def fused_bytes(tokens, inter, itemsize):
    """Read gate and up, write out: 3 * T * I elements."""
    return 3 * tokens * inter * itemsize


def unfused_bytes(tokens, inter, itemsize):
    """silu reads gate, writes a temporary; mul reads the temporary and up, writes out: 5 * T * I elements."""
    return 5 * tokens * inter * itemsize
