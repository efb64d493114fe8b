import random


def test_rejection_samples_the_residual_not_the_target():
    # q puts 0.9 on token 0, p puts 0.5 on it: the residual has mass only on token 1
    q = [[0.9, 0.1]]
    p = [[0.5, 0.5], [1.0, 0.0]]
    rejected = []
    rng = random.Random(7)
    for _ in range(400):
        out = verify([0], q, p, rng)
        if len(out) == 1:
            rejected.append(out[0])
    assert rejected and set(rejected) == {1}, "after a rejection only the residual's token may come out"


def test_output_distribution_equals_the_target():
    q = [[0.6, 0.3, 0.1]]
    p = [[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]]
    rng = random.Random(2024)
    counts = [0, 0, 0]
    n = 20000
    for _ in range(n):
        draft = 0 if rng.random() < 0.6 else (1 if rng.random() < 0.75 else 2)
        counts[verify([draft], q, p, rng)[0]] += 1
    assert all(abs(c / n - w) < 0.02 for c, w in zip(counts, p[0])), counts


def test_seeded_draw_order_is_exact():
    q = [[0.5, 0.5], [0.5, 0.5]]
    p = [[0.5, 0.5], [0.9, 0.1], [0.3, 0.7]]
    assert verify([1, 1], q, p, random.Random(3)) == [1, 0]
