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


def test_stops_at_the_first_rejection_without_a_bonus():
    q = [[1.0, 0.0]] * 3
    p = [[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 0.0]]
    out = verify([0, 0, 0], q, p, random.Random(5))
    assert out == [0, 1], "one accepted draft, then the residual's token, and nothing after it"


def test_no_drafts_still_emits_the_target_token():
    assert verify([], [], [[0.0, 0.0, 1.0]], random.Random(0)) == [2], "γ = 0 is plain decoding: one token from p[0]"


def test_all_accepted_emits_gamma_plus_one_from_the_last_row():
    q = [[0.0, 1.0, 0.0]] * 2
    p = [[0.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    out = verify([1, 1], q, p, random.Random(11))
    assert out == [1, 1, 2], "γ accepted drafts plus the bonus token from p[γ], not p[γ - 1]"
