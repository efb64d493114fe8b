def test_disabled_keeps_everything():
    assert keep([0.1, 2.0, -1.0], k=0, p=1.0) == [0, 1, 2]


def test_top_k_distinct():
    assert keep([0.5, 3.0, 1.0, 2.0], k=2, p=1.0) == [1, 3]


def test_top_p_distinct():
    # probabilities about 0.665, 0.245, 0.090
    assert keep([2.0, 1.0, 0.0], k=0, p=0.6) == [0]
    assert keep([2.0, 1.0, 0.0], k=0, p=0.9) == [0, 1]
