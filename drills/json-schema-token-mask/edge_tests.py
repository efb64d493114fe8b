def test_bit_31_makes_a_negative_int32():
    words = pack({31}, 32)
    assert words == [-(2**31)], "bit 31 is the sign bit of an int32 word"
    assert all(-(2**31) <= w < 2**31 for w in pack(set(range(64)), 64))


def test_unpack_a_negative_word():
    assert unpack([-1], 32) == list(range(32))
    assert unpack([-1], 20) == list(range(20)), "padding bits past the vocabulary are ignored"


def test_padded_vocabulary_past_the_mask_is_disallowed():
    out = apply([0.0] * 40, pack({3}, 33))
    assert [i for i, x in enumerate(out) if x != float("-inf")] == [3]


def test_out_of_range_token_refused():
    try:
        pack({10}, 10)
    except ValueError:
        return
    raise AssertionError("token 10 is outside a vocabulary of 10")


def test_word_count_rounds_up():
    assert pack(set(), 33) == [0, 0], "33 tokens need two words"
    assert pack(set(), 32) == [0], "32 tokens fit one word exactly"
