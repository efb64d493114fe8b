def kv_bytes_per_gpu(cfg: dict, tokens: int, tp: int) -> int:
    layers, b = cfg["layers"], cfg["dtype_bytes"]
    if cfg["kind"] == "mla":
        per_token = cfg["latent_dim"] + cfg["rope_dim"]
    elif cfg["kind"] in ("mha", "gqa"):
        heads = cfg["kv_heads"]
        if heads % tp == 0:
            per_gpu_heads = heads // tp
        elif tp % heads == 0:
            per_gpu_heads = 1
        else:
            raise ValueError(f"tp={tp} does not split {heads} KV heads")
        per_token = 2 * per_gpu_heads * cfg["head_dim"]
    else:
        raise ValueError(f"unknown attention kind {cfg['kind']!r}")
    return layers * tokens * per_token * b
