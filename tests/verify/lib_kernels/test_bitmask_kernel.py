"""The token-bitmask kernel against its reference through the interpreter, with its edge cases."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest
import torch


def pack(allowed: torch.Tensor) -> torch.Tensor:
    """bool [B, V] -> int32 [B, ceil(V / 32)], token t = bit t & 31 of word t >> 5, bit by bit."""
    b, v = allowed.shape
    words = [[0] * ((v + 31) // 32) for _ in range(b)]
    for i, t in allowed.nonzero().tolist():
        words[i][t // 32] |= 1 << (t % 32)
    return torch.tensor([[w - 2**32 if w >= 2**31 else w for w in row] for row in words], dtype=torch.int32)


@pytest.fixture(scope="module")
def bk(kernels: Callable[[str], ModuleType]) -> ModuleType:
    return kernels("bitmask_kernel")


@pytest.fixture(scope="module")
def case() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    v = 77  # not a multiple of 32: the last word is padded
    allowed = torch.rand(4, v, generator=g) < 0.5
    allowed[1] = False  # a fully masked row
    allowed[2] = True  # every bit set: words of -1, the sign bit in each
    allowed[3, 31] = allowed[3, 63] = True  # the sign bit of word 0 and word 1
    return torch.randn(4, v, generator=g), pack(allowed), allowed


def test_matches_reference_and_the_allowed_set(bk: ModuleType, case: tuple[torch.Tensor, ...]) -> None:
    logits, words, allowed = case
    out = bk.apply_bitmask(logits, words)
    assert torch.equal(out, bk.apply_bitmask_reference(logits, words))
    assert torch.equal(torch.isfinite(out), allowed)  # -inf exactly where the bit is 0
    assert torch.equal(out[allowed], logits[allowed])
    assert (words[2, :-1] == -1).all() and int(words[2, -1]) == 2 ** (77 - 64) - 1  # padding bits stay 0
    assert words[3, 0] < 0


def test_fully_masked_row_is_all_minus_inf(bk: ModuleType, case: tuple[torch.Tensor, ...]) -> None:
    logits, words, _ = case
    row = bk.apply_bitmask(logits, words)[1]
    assert bool((row == float("-inf")).all())
    assert bool(torch.isnan(torch.softmax(row, -1)).all())  # why an engine must reject an empty set first


def test_block_smaller_than_the_row(bk: ModuleType, case: tuple[torch.Tensor, ...]) -> None:
    logits, words, _ = case
    assert torch.equal(bk.apply_bitmask(logits, words, block=32), bk.apply_bitmask_reference(logits, words))


def test_wrong_bit_order_fails(bk: ModuleType, case: tuple[torch.Tensor, ...]) -> None:
    logits, words, _ = case
    assert not torch.equal(bk.apply_bitmask_msb_first(logits, words), bk.apply_bitmask_reference(logits, words))
