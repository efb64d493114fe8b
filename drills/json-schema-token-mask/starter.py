def pack(allowed: set[int], vocab_size: int) -> list[int]:
    raise NotImplementedError


def unpack(words: list[int], vocab_size: int) -> list[int]:
    raise NotImplementedError


def apply(logits: list[float], words: list[int]) -> list[float]:
    raise NotImplementedError
