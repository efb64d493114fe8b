def pack(allowed, vocab_size):
    """Leaves bit 31 as a large positive int (out of the int32 range) and reads words with Python's sign."""
    words = [0] * (-(-vocab_size // 32))
    for t in allowed:
        if not 0 <= t < vocab_size:
            raise ValueError("outside")
        words[t // 32] |= 1 << (t % 32)
    return words


def unpack(words, vocab_size):
    return [t for t in range(min(vocab_size, 32 * len(words))) if words[t // 32] >> (t % 32) & 1]


def apply(logits, words):
    return [x if t // 32 < len(words) and words[t // 32] >> (t % 32) & 1 else float("-inf")
            for t, x in enumerate(logits)]
