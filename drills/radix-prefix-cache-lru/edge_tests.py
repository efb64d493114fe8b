A, B, C, D, E = (1,), (2,), (3,), (4,), (5,)


def test_evicts_a_leaf_even_when_an_interior_node_is_older():
    c = PrefixCache(capacity=3)
    c.insert([A, B], now=1)      # A is the parent of B
    c.match([A, B], now=5)       # both used at 5
    c.insert([C], now=2)         # C used at 2
    c.match([A], now=6)          # A newer, B still at 5
    assert c.insert([D], now=7) == 1
    assert c.match([C], now=8) == 0, "C was the least recently used leaf"
    assert c.match([A, B], now=9) == 2


def test_no_block_is_ever_stranded():
    c = PrefixCache(capacity=4)
    c.insert([A, B, C], now=1)
    c.match([A, B, C], now=2)
    c.match([A], now=1)          # a stale interior timestamp must not make A the victim
    c.insert([D, E], now=3)
    assert c.size() == 4
    assert c.match([A, B], now=4) == 2, "the chain from the root is intact"


def test_path_being_inserted_is_never_evicted():
    c = PrefixCache(capacity=2)
    c.insert([A, B, C], now=1)
    assert c.size() == 2
    assert c.match([A, B], now=2) == 2
