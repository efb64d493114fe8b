def pack(allowed: set[int], vocab_size: int) -> list[int]:
    words = [0] * (-(-vocab_size // 32))
    for t in allowed:
        if not 0 <= t < vocab_size:
            raise ValueError(f"token {t} outside the vocabulary of {vocab_size}")
        words[t // 32] |= 1 << (t % 32)
    return [w - (1 << 32) if w >= 1 << 31 else w for w in words]


def _bit(words: list[int], t: int) -> bool:
    return t // 32 < len(words) and (words[t // 32] & 0xFFFFFFFF) >> (t % 32) & 1 == 1


def unpack(words: list[int], vocab_size: int) -> list[int]:
    return [t for t in range(min(vocab_size, 32 * len(words))) if _bit(words, t)]


def apply(logits: list[float], words: list[int]) -> list[float]:
    return [x if _bit(words, t) else float("-inf") for t, x in enumerate(logits)]
