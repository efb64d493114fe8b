import math


def keep(logits: list[float], k: int, p: float) -> list[int]:
    ids = list(range(len(logits)))
    if 0 < k < len(logits):
        cut = sorted(logits, reverse=True)[k - 1]
        ids = [i for i in ids if logits[i] >= cut]
    if p < 1.0:
        top = max(logits[i] for i in ids)
        weights = {i: math.exp(logits[i] - top) for i in ids}
        total = sum(weights.values())
        probs = {i: w / total for i, w in weights.items()}
        running, cut_p = 0.0, 0.0
        for i in sorted(ids, key=lambda j: (-probs[j], j)):
            running += probs[i]
            cut_p = probs[i]
            if running >= p:
                break
        ids = [i for i in ids if probs[i] >= cut_p]
    return sorted(ids)
