import math


def test_top_k_keeps_ties_at_the_cut():
    assert keep([1.0, 3.0, 1.0, 1.0, 0.0], k=2, p=1.0) == [0, 1, 2, 3]


def test_top_p_renormalizes_after_top_k():
    logits = [2.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    # over the top-2 survivors: 0.731 and 0.269, so p=0.7 needs one token; over the full
    # distribution token 0 has only 0.524 and a kernel that skips renormalizing keeps two
    assert keep(logits, k=2, p=0.7) == [0]
    assert keep(logits, k=2, p=0.75) == [0, 1]


def test_top_p_keeps_ties_at_the_cut():
    assert keep([0.0, 0.0, 0.0, 0.0], k=0, p=0.3) == [0, 1, 2, 3]


def test_always_one_survivor():
    assert keep([5.0, -math.inf, 1.0], k=1, p=0.0) == [0]


def test_top_p_tie_straddling_the_cut():
    # probabilities about 0.447, 0.164, 0.164, 0.164, 0.060: the sum first reaches 0.7 inside the tie
    assert keep([2.0, 1.0, 1.0, 1.0, 0.0], k=0, p=0.7) == [0, 1, 2, 3]


def test_k_at_or_above_the_vocabulary_keeps_everything():
    assert keep([1.0, 2.0, 0.5], k=3, p=1.0) == [0, 1, 2]
    assert keep([1.0, 2.0, 0.5], k=7, p=1.0) == [0, 1, 2]


def test_top_k_tie_then_top_p_over_the_tied_survivors():
    # top-2 keeps 3.0 and both 1.0s; over those three: about 0.787, 0.107, 0.107
    assert keep([1.0, 3.0, 1.0, 0.0], k=2, p=0.8) == [0, 1, 2]
