"""FP8 E4M3 KV quantise/dequantise against torch.float8_e4m3fn through the interpreter."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest
import torch


@pytest.fixture(scope="module")
def f8(kernels: Callable[[str], ModuleType]) -> ModuleType:
    return kernels("fp8_kv_kernel")


def test_every_code_and_every_midpoint_round_to_nearest_even(f8: ModuleType) -> None:
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    finite = codes[(codes & 0x7F) != 0x7F]  # 0x7F and 0xFF are NaN in E4M3fn
    grid = torch.sort(finite.view(torch.float8_e4m3fn).float()).values
    mids = (grid[1:] + grid[:-1]) / 2  # ties: the even code must win
    x = torch.stack([torch.cat([grid, grid[:1]]), torch.cat([mids, mids[:2]])])
    ones = torch.ones(x.shape[1])
    assert torch.equal(f8.quantize_per_channel(x, ones), f8.quantize_per_channel_reference(x, ones))


def test_per_token_codes_scales_and_dequant(f8: ModuleType) -> None:
    g = torch.Generator().manual_seed(6)
    x = torch.randn(8, 64, generator=g) * torch.logspace(-4, 3, 8)[:, None]  # magnitudes over seven decades
    x[3] = 0.0  # an all-zero token: scale 1, never a division by zero
    codes, scales = f8.quantize_per_token(x)
    ref_codes, ref_scales = f8.quantize_per_token_reference(x)
    assert torch.equal(codes, ref_codes) and torch.equal(scales, ref_scales)
    assert int((codes & 0x7F).max()) == 0x7E  # each token's largest magnitude lands on 448
    back = f8.dequantize(codes, scales, per_token=True)
    assert torch.equal(back, f8.dequantize_reference(ref_codes, ref_scales, per_token=True))
    assert float(((back - x).abs() / x.abs().amax(1, keepdim=True).clamp(min=1e-30)).max()) <= 2**-4


def test_per_channel_static_scales_saturate_at_448(f8: ModuleType) -> None:
    g = torch.Generator().manual_seed(7)
    scales = torch.full((64,), 0.01)  # calibrated for |x| up to 4.48
    x = torch.randn(4, 64, generator=g) * 10  # most values past the calibrated range
    codes = f8.quantize_per_channel(x, scales)
    assert torch.equal(codes, f8.quantize_per_channel_reference(x, scales))
    back = f8.dequantize(codes, scales, per_token=False)
    assert torch.equal(back, f8.dequantize_reference(codes, scales, per_token=False))
    over = x.abs() > 448 * 0.01
    assert bool(over.any()) and torch.equal(back[over].abs(), torch.full_like(back[over], 448 * 0.01))


def test_unclamped_encoder_fails(f8: ModuleType) -> None:
    scales = torch.full((64,), 0.01)
    x = torch.linspace(-10, 10, 128).reshape(2, 64)
    wrong = f8.quantize_per_channel_unclamped(x, scales)
    assert not torch.equal(wrong, f8.quantize_per_channel_reference(x, scales))
