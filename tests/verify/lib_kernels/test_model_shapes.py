"""verify/_lib/model_shapes.py: the shared counts against figures published or logged for real models."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest


@pytest.fixture(scope="module")
def ms(kernels: Callable[[str], ModuleType]) -> ModuleType:
    return kernels("model_shapes")


def test_llama_3_1_8b_has_8_03b_parameters(ms: ModuleType) -> None:
    # 32 layers, hidden 4096, 32 Q / 8 KV heads of 128, FFN 14336, vocabulary 128256 (Meta's sku_list)
    assert ms.dense_decoder_params(32, 4096, 32, 8, 128, 14336, 128256) == 8_030_261_248


def test_mamba2_state_of_nemotron_h_8b_layer(ms: ModuleType) -> None:
    # 128 heads of 64, d_state 128, 8 groups, conv kernel 4: 2 MiB of SSM state and 3 x 10240 conv values in BF16
    conv, ssm = ms.mamba2_state_bytes(128, 64, 128, 8, 4)
    assert (conv, ssm) == (61_440, 2 * 2**20)


def test_tensor_parallel_splits_evenly_until_groups_run_out(ms: ModuleType) -> None:
    whole = sum(ms.mamba2_state_bytes(128, 64, 128, 8, 4))
    for tp in (2, 4, 8):
        assert sum(ms.mamba2_state_bytes(128, 64, 128, 8, 4, tp=tp)) == whole / tp
    conv16, ssm16 = ms.mamba2_state_bytes(128, 64, 128, 8, 4, tp=16)
    assert ssm16 == 2 * 2**20 / 16  # per-head state keeps splitting
    assert conv16 > 61_440 / 16  # B and C of the 8 groups are replicated to 16
    assert ms.extra_groups(8, 16) == 8 and ms.extra_groups(8, 4) == 0


def test_fp32_state_doubles_only_the_ssm_part(ms: ModuleType) -> None:
    conv, ssm = ms.mamba2_state_bytes(128, 64, 128, 8, 4, ssm_bytes=4)
    assert (conv, ssm) == (61_440, 4 * 2**20)


def test_nemotron_h_8b_blocks_and_total(ms: ModuleType) -> None:
    # Nemotron-H-8B config: hidden 4096, 128 Mamba heads of 64, 8 groups, d_state 128, conv 4, 32 Q / 8 KV heads of
    # 128, relu2 MLP 21504, vocabulary 131072, untied embeddings. Per block, counted by hand:
    # Mamba: in_proj 4096 x (8192 z + 10240 xBC + 128 dt) + conv 10240 x 4 + bias 10240 + dt_bias/A_log/D 3 x 128
    #        + gated norm 8192 + out_proj 8192 x 4096 + block norm 4096 = 109,640,064
    # attention: q/o 2 x 4096 x 4096 + k/v 2 x 4096 x 1024 + norm 4096 = 41,947,136
    # MLP: up/down 2 x 4096 x 21504 + norm 4096 = 176,164,864
    shape = (4096, 128, 64, 8, 128, 4, 32, 8, 128, 21504)
    embeddings = 2 * 131072 * 4096 + 4096  # input embedding, LM head, final norm
    assert ms.nemotron_h_params(1, 0, 0, *shape, 131072) - embeddings == 109_640_064
    assert ms.nemotron_h_params(0, 1, 0, *shape, 131072) - embeddings == 41_947_136
    assert ms.nemotron_h_params(0, 0, 1, *shape, 131072) - embeddings == 176_164_864
    assert ms.nemotron_h_params(24, 4, 24, *shape, 131072) == 8_100_852_736
