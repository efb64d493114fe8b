LLAMA_70B = {"kind": "gqa", "layers": 80, "kv_heads": 8, "head_dim": 128, "dtype_bytes": 2}


def test_gqa_one_gpu():
    assert kv_bytes_per_gpu(LLAMA_70B, 1, 1) == 327680


def test_gqa_tp4_splits_heads():
    assert kv_bytes_per_gpu(LLAMA_70B, 1000, 4) == 327680 * 1000 // 4


def test_mha():
    mha = dict(LLAMA_70B, kind="mha", kv_heads=64)
    assert kv_bytes_per_gpu(mha, 1, 8) == 2 * 80 * 8 * 128 * 2
