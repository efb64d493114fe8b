"""Gather a batch's paged KV through its block table into contiguous rows: a Triton kernel and its reference.

Cache layout (one layer, K or V): [num_blocks, block_size, H_kv, D]; block_table [B, max_blocks] int32
maps a sequence's logical block to a physical one, -1 where there is none (a hole: a block freed by a
sliding window, or not yet allocated); seq_lens [B]. Output [B, max_blocks * block_size, H_kv, D]:
token t of sequence b is cache[block_table[b, t // block_size], t % block_size] when t < seq_lens[b]
and the entry is not a hole, and zero otherwise. One program per (sequence, tile of tokens); each token
row (H_kv * D contiguous elements) is one coalesced load.

Two bugs the IGNORE_HOLES flag reproduces: PyTorch-style indexing reads a -1 entry as the LAST
physical block (another request's keys) and the tail past seq_len is copied, not zeroed. Offsets are
formed in int64: block * block_size * H_kv * D overflows int32 once a layer's cache passes 2**31
elements.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def paged_gather_kernel(
    cache_ptr, table_ptr, seq_lens_ptr, out_ptr, num_blocks, max_blocks, block_size, row,
    BLOCK_T: tl.constexpr, BLOCK_R: tl.constexpr, IGNORE_HOLES: tl.constexpr,
):  # fmt: skip
    b = tl.program_id(0)
    t = tl.program_id(1) * BLOCK_T + tl.arange(0, BLOCK_T)
    c = tl.arange(0, BLOCK_R)
    max_len = max_blocks * block_size
    in_out = t < max_len
    phys = tl.load(table_ptr + b * max_blocks + t // block_size, mask=in_out, other=-1)
    if IGNORE_HOLES:  # the bugs: -1 wraps to the last block, and the tail past seq_len is read
        phys = tl.where(phys < 0, num_blocks - 1, phys)
        ok = in_out
    else:
        ok = in_out & (t < tl.load(seq_lens_ptr + b)) & (phys >= 0)
    slot = phys.to(tl.int64) * block_size + t % block_size  # int64 before the row multiply
    src = cache_ptr + slot[:, None] * row + c[None, :]
    x = tl.load(src, mask=ok[:, None] & (c[None, :] < row), other=0.0)
    dst = out_ptr + (b * max_len + t).to(tl.int64)[:, None] * row + c[None, :]
    tl.store(dst, x, mask=in_out[:, None] & (c[None, :] < row))


def paged_gather(cache, block_table, seq_lens, block_t=16, ignore_holes=False):
    """cache [NB, BS, H, D], block_table [B, MB] int32, seq_lens [B] int32 -> [B, MB * BS, H, D]."""
    nb, bs, h, d = cache.shape
    b, mb = block_table.shape
    out = torch.empty(b, mb * bs, h, d, dtype=cache.dtype, device=cache.device)
    grid = (b, triton.cdiv(mb * bs, block_t))
    paged_gather_kernel[grid](
        cache.contiguous(), block_table.contiguous(), seq_lens.contiguous(), out, nb, mb, bs, h * d,
        BLOCK_T=block_t, BLOCK_R=triton.next_power_of_2(h * d), IGNORE_HOLES=ignore_holes,
    )  # fmt: skip
    return out


def paged_gather_ignoring_holes(cache, block_table, seq_lens):
    """The deliberately broken launch: holes read the last block, the tail past seq_len is copied."""
    return paged_gather(cache, block_table, seq_lens, ignore_holes=True)


def paged_gather_reference(cache, block_table, seq_lens):
    """PyTorch: index every token's slot, then zero the holes and the tail (indexing alone would read
    a -1 entry as the last block)."""
    nb, bs, h, d = cache.shape
    b, mb = block_table.shape
    t = torch.arange(mb * bs, device=cache.device)
    phys = block_table.long()[:, t // bs]  # [B, MB * BS]
    ok = (t[None, :] < seq_lens.long()[:, None]) & (phys >= 0)
    rows = cache.reshape(nb * bs, h, d)[(phys.clamp(min=0) * bs + t % bs).reshape(-1)]
    return torch.where(ok.reshape(-1, 1, 1), rows, torch.zeros((), dtype=cache.dtype, device=cache.device)).reshape(
        b, mb * bs, h, d
    )


def gather_bytes(tokens, h, d, itemsize):
    """Bytes one gather moves for `tokens` live tokens: each row read once and written once."""
    return 2 * tokens * h * d * itemsize
