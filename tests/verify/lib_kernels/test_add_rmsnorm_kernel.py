"""Fused add + RMSNorm against its reference through the interpreter: bitwise in the engine's rounding order."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest
import torch


@pytest.fixture(scope="module")
def rn(kernels: Callable[[str], ModuleType]) -> ModuleType:
    return kernels("add_rmsnorm_kernel")


def inputs(hidden: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(3)
    x = (torch.randn(4, hidden, generator=g) * 2).to(torch.bfloat16)
    r = (torch.randn(4, hidden, generator=g) * 2).to(torch.bfloat16)
    r[-1] = -x[-1]  # a row that sums to zero
    w = (1 + 0.1 * torch.randn(hidden, generator=g)).to(torch.bfloat16)
    return x, r, w


@pytest.mark.parametrize("hidden", [200, 256])  # 200: a masked tail in a 256-wide block
def test_bitwise_engine_order(rn: ModuleType, hidden: int) -> None:
    x, r, w = inputs(hidden)
    out, res = rn.add_rmsnorm(x, r, w, 1e-5)
    ref_out, ref_res = rn.add_rmsnorm_reference(x, r, w, 1e-5)
    assert torch.equal(res, ref_res)
    assert torch.equal(out, ref_out)
    assert bool((out[-1] == 0).all())


def test_zero_residual_passes_x_through(rn: ModuleType) -> None:
    x, _, _ = inputs(256)
    zero, ones = torch.zeros_like(x), torch.ones(256, dtype=torch.bfloat16)
    out, res = rn.add_rmsnorm(x, zero, ones, 1e-5)
    assert torch.equal(res, x)
    assert torch.equal(out, rn.add_rmsnorm_reference(x, zero, ones, 1e-5)[0])


def test_input_variance_bug_differs(rn: ModuleType) -> None:
    x, r, w = inputs(256)
    bad, _ = rn.add_rmsnorm_input_variance(x, r, w, 1e-5)
    assert not torch.allclose(bad.float(), rn.add_rmsnorm_reference(x, r, w, 1e-5)[0].float(), rtol=1.6e-2, atol=1e-5)


def test_missing_eps_only_shows_on_the_zero_row(rn: ModuleType) -> None:
    x, r, w = inputs(256)
    bad, _ = rn.add_rmsnorm_no_eps(x, r, w, 1e-5)
    good = rn.add_rmsnorm_reference(x, r, w, 1e-5)[0]
    assert torch.allclose(bad[:-1].float(), good[:-1].float(), rtol=1.6e-2, atol=1e-5)
    assert bool(torch.isnan(bad[-1].float()).all())


def test_bytes(rn: ModuleType) -> None:
    assert rn.fused_bytes(3, 100, 2) / rn.unfused_bytes(3, 100, 2) == pytest.approx(2 / 3)


@pytest.mark.parametrize("hidden", [4096, 8192, 16384])  # Llama-3.1 8B, 70B, 405B
def test_launch_keeps_sixteen_values_per_thread(rn: ModuleType, hidden: int) -> None:
    warps = rn.warps_for(hidden)
    assert warps <= 32  # 1,024 threads, CUDA's block limit
    assert hidden // (warps * 32) == 16
