import random


def test_identical_models_accept_everything_and_add_a_bonus():
    d = [0.25, 0.25, 0.5]
    out = verify([2, 0, 1], [d, d, d], [d, d, d, [0.0, 1.0, 0.0]], random.Random(0))
    assert out == [2, 0, 1, 1]


def test_target_that_never_emits_the_draft_rejects_it():
    out = verify([0], [[1.0, 0.0]], [[0.0, 1.0], [1.0, 0.0]], random.Random(1))
    assert out == [1]
