A, B, C, D = (1, 2), (3, 4), (5, 6), (7, 8)


def test_insert_then_match_prefix():
    c = PrefixCache(capacity=8)
    assert c.insert([A, B, C], now=1) == 0
    assert c.match([A, B, D], now=2) == 2
    assert c.size() == 3


def test_shared_prefix_is_stored_once():
    c = PrefixCache(capacity=8)
    c.insert([A, B], now=1)
    c.insert([A, C], now=2)
    assert c.size() == 3
