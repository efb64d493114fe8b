import math


def keep(logits: list[float], k: int, p: float) -> list[int]:
    """Sorted-prefix top-k (drops ties at the cut) and top-p over the full distribution."""
    order = sorted(range(len(logits)), key=lambda i: (-logits[i], i))
    ids = order[:k] if 0 < k < len(logits) else order
    if p < 1.0:
        top = max(logits)
        weights = [math.exp(x - top) for x in logits]
        total = sum(weights)
        running, kept = 0.0, []
        for i in ids:
            kept.append(i)
            running += weights[i] / total
            if running >= p:
                break
        ids = kept
    return sorted(ids)
