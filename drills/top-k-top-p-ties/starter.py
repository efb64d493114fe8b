

def keep(logits: list[float], k: int, p: float) -> list[int]:
    raise NotImplementedError
