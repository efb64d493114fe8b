import random


def _sample(d: list[float], rng: random.Random) -> int:
    u = rng.random() * sum(d)
    acc = 0.0
    for i, w in enumerate(d):
        acc += w
        if acc > u:
            return i
    return max(i for i, w in enumerate(d) if w > 0)


def verify(drafts: list[int], q: list[list[float]], p: list[list[float]], rng: random.Random) -> list[int]:
    out: list[int] = []
    for i, t in enumerate(drafts):
        u = rng.random()
        if q[i][t] > 0 and u < p[i][t] / q[i][t]:
            out.append(t)
            continue
        residual = [max(0.0, a - b) for a, b in zip(p[i], q[i])]
        out.append(_sample(residual if sum(residual) > 0 else p[i], rng))
        return out
    out.append(_sample(p[len(drafts)], rng))
    return out
