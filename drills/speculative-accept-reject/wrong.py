import random


def _sample(d, rng):
    u = rng.random() * sum(d)
    acc = 0.0
    for i, w in enumerate(d):
        acc += w
        if acc > u:
            return i
    return len(d) - 1


def verify(drafts, q, p, rng):
    """Resamples a rejection from the target p instead of the residual max(0, p - q): biased."""
    out = []
    for i, t in enumerate(drafts):
        u = rng.random()
        if q[i][t] > 0 and u < p[i][t] / q[i][t]:
            out.append(t)
            continue
        out.append(_sample(p[i], rng))
        return out
    out.append(_sample(p[len(drafts)], rng))
    return out
