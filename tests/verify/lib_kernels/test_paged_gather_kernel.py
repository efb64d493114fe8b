"""The paged-KV gather against its reference through the interpreter: holes, short sequences, the tail."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest
import torch


@pytest.fixture(scope="module")
def pg(kernels: Callable[[str], ModuleType]) -> ModuleType:
    return kernels("paged_gather_kernel")


@pytest.fixture(scope="module")
def case() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(5)
    cache = torch.randn(12, 4, 2, 8, generator=g)  # 12 blocks of 4 tokens, 2 KV heads of 8
    table = torch.tensor(
        [
            [3, 7, -1, 5],  # a hole inside the live range (a block freed by a sliding window)
            [0, 11, 2, -1],  # the last physical block in use, a sequence ending mid-block
            [9, -1, -1, -1],  # a short sequence: unallocated entries past its end
        ],
        dtype=torch.int32,
    )
    return cache, table, torch.tensor([14, 10, 3], dtype=torch.int32)


def test_matches_reference(pg: ModuleType, case: tuple[torch.Tensor, ...]) -> None:
    cache, table, lens = case
    out = pg.paged_gather(cache, table, lens)
    assert torch.equal(out, pg.paged_gather_reference(cache, table, lens))
    assert torch.equal(out[0, 4:8], cache[7])  # logical block 1 of sequence 0 is physical block 7
    assert torch.equal(out[1, 9], cache[2, 1])


def test_holes_and_tail_are_zero(pg: ModuleType, case: tuple[torch.Tensor, ...]) -> None:
    cache, table, lens = case
    out = pg.paged_gather(cache, table, lens, block_t=8)
    assert not out[0, 8:12].any()  # the hole
    assert not out[0, 14:].any() and not out[1, 10:].any() and not out[2, 3:].any()  # past each length


def test_ignoring_holes_reads_another_requests_block(pg: ModuleType, case: tuple[torch.Tensor, ...]) -> None:
    cache, table, lens = case
    wrong = pg.paged_gather_ignoring_holes(cache, table, lens)
    assert not torch.equal(wrong, pg.paged_gather_reference(cache, table, lens))
    assert torch.equal(wrong[0, 8:12], cache[11])  # -1 read as the last block: sequence 1's keys
