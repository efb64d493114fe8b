import math


def test_top_k_keeps_ties_at_the_cut():
    assert keep([1.0, 3.0, 1.0, 1.0, 0.0], k=2, p=1.0) == [0, 1, 2, 3]


def test_top_p_renormalizes_after_top_k():
    logits = [2.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    # over the top-2 survivors: 0.731 and 0.269; p=0.75 needs both
    assert keep(logits, k=2, p=0.75) == [0, 1]


def test_top_p_keeps_ties_at_the_cut():
    assert keep([0.0, 0.0, 0.0, 0.0], k=0, p=0.3) == [0, 1, 2, 3]


def test_always_one_survivor():
    assert keep([5.0, -math.inf, 1.0], k=1, p=0.0) == [0]
