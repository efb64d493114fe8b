"""Apply a packed int32 token bitmask to a batch of logits: a Triton kernel and its PyTorch reference.

Layout (xgrammar's and llguidance's): token t is bit t & 31 of word t >> 5, least significant bit
first; a set bit allows the token. Masked tokens become -inf. The kernel has the structure of
xgrammar's apply_token_bitmask_inplace_triton.py as vLLM adapts it (vllm/v1/worker/gpu/structured_outputs.py):
one program per (row, block of the vocabulary), each reading BLOCK // 32 words and unpacking them in
registers. It writes to a separate output so the check can compare it with the untouched input;
in an engine the same kernel stores in place (the same bytes: one read and one write of the row).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def bitmask_kernel(logits_ptr, words_ptr, out_ptr, vocab, n_words, BLOCK: tl.constexpr, MSB_FIRST: tl.constexpr):
    row = tl.program_id(0)
    blk = tl.program_id(1)
    w = blk * (BLOCK // 32) + tl.arange(0, BLOCK // 32)  # the words this block needs
    words = tl.load(words_ptr + row * n_words + w, mask=w < n_words, other=0)
    shift = tl.arange(0, 32)
    if MSB_FIRST:  # the deliberately wrong bit order: bit 31 - (t & 31)
        shift = 31 - shift
    bits = (words[:, None] >> shift[None, :]) & 1  # [BLOCK // 32, 32]; & 1 drops the smeared sign bit
    allowed = tl.reshape(bits, (BLOCK,)) != 0
    tok = blk * BLOCK + tl.arange(0, BLOCK)
    live = tok < vocab
    x = tl.load(logits_ptr + row * vocab + tok, mask=live, other=0.0)
    tl.store(out_ptr + row * vocab + tok, tl.where(allowed, x, float("-inf")), mask=live)


def apply_bitmask(logits, words, block=256, msb_first=False):
    """logits [B, V] float, words [B, ceil(V / 32)] int32 -> a new [B, V] with -inf where the bit is 0."""
    logits, words = logits.contiguous(), words.contiguous()
    b, v = logits.shape
    out = torch.empty_like(logits)
    grid = (b, triton.cdiv(v, block))
    bitmask_kernel[grid](logits, words, out, v, words.shape[1], BLOCK=block, MSB_FIRST=msb_first)
    return out


def apply_bitmask_msb_first(logits, words):
    """The deliberately broken launch: reads each word's bits in the wrong order."""
    return apply_bitmask(logits, words, msb_first=True)


def apply_bitmask_reference(logits, words):
    """The same in PyTorch: unpack every word into 32 bits, drop the padding, fill -inf."""
    v = logits.shape[-1]
    shifts = torch.arange(32, dtype=torch.int32, device=words.device)
    bits = ((words.unsqueeze(-1) >> shifts) & 1).flatten(-2)[..., :v].bool()
    return logits.masked_fill(~bits, float("-inf"))


def bitmask_bytes(batch, vocab, itemsize):
    """Bytes one launch moves: the logits read and written once, the words read once."""
    return 2 * batch * vocab * itemsize + batch * ((vocab + 31) // 32) * 4
