LLAMA_70B = {"kind": "gqa", "layers": 80, "kv_heads": 8, "head_dim": 128, "dtype_bytes": 2}
DSV3 = {"kind": "mla", "layers": 61, "latent_dim": 512, "rope_dim": 64, "dtype_bytes": 2}


def test_tp_past_kv_heads_replicates():
    assert kv_bytes_per_gpu(LLAMA_70B, 1, 16) == kv_bytes_per_gpu(LLAMA_70B, 1, 8) == 2 * 80 * 128 * 2


def test_mla_is_not_split_by_tp():
    assert kv_bytes_per_gpu(DSV3, 1, 1) == 61 * 576 * 2
    assert kv_bytes_per_gpu(DSV3, 1, 8) == 61 * 576 * 2


def test_uneven_tp_is_refused():
    try:
        kv_bytes_per_gpu(LLAMA_70B, 1, 3)
    except ValueError:
        return
    raise AssertionError("tp=3 cannot split 8 KV heads")


def test_tp_past_kv_heads_but_not_a_multiple_is_refused():
    try:
        kv_bytes_per_gpu(LLAMA_70B, 1, 12)
    except ValueError:
        return
    raise AssertionError("tp=12 cannot place 8 KV heads evenly: 12 is neither a divisor nor a multiple of 8")
