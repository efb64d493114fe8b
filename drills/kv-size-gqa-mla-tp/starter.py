def kv_bytes_per_gpu(cfg: dict, tokens: int, tp: int) -> int:
    raise NotImplementedError
