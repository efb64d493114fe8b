"""Fused SiLU-and-mul against its reference through the interpreter, float32 and bfloat16."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest
import torch


@pytest.fixture(scope="module")
def sm(kernels: Callable[[str], ModuleType]) -> ModuleType:
    return kernels("silu_mul_kernel")


@pytest.mark.parametrize(("dtype", "rtol", "atol"), [(torch.float32, 1e-5, 1e-6), (torch.bfloat16, 1.6e-2, 1e-5)])
def test_matches_reference(sm: ModuleType, dtype: torch.dtype, rtol: float, atol: float) -> None:
    x = (torch.randn(5, 2 * 200, generator=torch.Generator().manual_seed(8)) * 4).to(dtype)  # 200: a partial block
    out = sm.silu_and_mul(x)
    assert out.dtype == dtype and out.shape == (5, 200)
    assert torch.allclose(out.float(), sm.silu_and_mul_reference(x).float(), rtol=rtol, atol=atol)


def test_swapped_halves_fail(sm: ModuleType) -> None:
    x = torch.randn(5, 2 * 200, generator=torch.Generator().manual_seed(8))
    assert not torch.allclose(sm.silu_and_mul_swapped(x), sm.silu_and_mul_reference(x), rtol=1e-2, atol=1e-2)


def test_bytes_saved(sm: ModuleType) -> None:
    assert sm.fused_bytes(10, 100, 2) / sm.unfused_bytes(10, 100, 2) == pytest.approx(0.6)
