A, B, C, D, E = (1,), (2,), (3,), (4,), (5,)


def test_evicts_a_leaf_even_when_an_interior_node_ties_it():
    c = PrefixCache(capacity=3)
    c.insert([A, B], now=1)      # A is the parent of B; both used at 1
    c.insert([C], now=2)
    assert c.insert([D], now=3) == 1
    assert c.match([A, B], now=4) == 1, "B, the oldest leaf, goes; A ties it but has a child"
    assert c.match([C], now=5) == 1 and c.size() == 3


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


def test_ties_go_to_the_smaller_block():
    c = PrefixCache(capacity=2)
    c.insert([B], now=1)
    c.insert([A], now=1)
    assert c.insert([C], now=2) == 1
    assert c.match([A], now=3) == 0, "A and B tie at time 1; A is the smaller tuple"
    assert c.match([B], now=3) == 1


def test_a_parent_becomes_evictable_once_its_children_are_gone():
    c = PrefixCache(capacity=3)
    c.insert([A, B], now=1)
    c.insert([C], now=2)
    assert c.insert([D, E], now=3) == 2, "B goes first (oldest leaf), then A, now a leaf and older than C"
    assert c.match([C], now=4) == 1
    assert c.match([A], now=4) == 0
    assert c.size() == 3


def test_matched_prefix_of_the_insert_is_protected():
    c = PrefixCache(capacity=3)
    c.insert([A], now=1)
    c.insert([C], now=5)
    c.insert([A, B, D], now=6)
    assert c.match([A, B], now=7) == 2, "A is on the inserted path: C, not A, is the victim"
    assert c.match([C], now=7) == 0
