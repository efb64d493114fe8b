def test_low_bits():
    assert pack({0, 1, 5}, 10) == [0b100011]


def test_second_word():
    assert pack({32, 33}, 64) == [0, 3]


def test_round_trip():
    allowed = {0, 7, 31 - 1, 40, 99}
    assert unpack(pack(allowed, 100), 100) == sorted(allowed)


def test_apply_masks():
    out = apply([1.0, 2.0, 3.0], pack({1}, 3))
    assert out == [float("-inf"), 2.0, float("-inf")]
