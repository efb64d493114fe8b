def test_allocate_rounds_up():
    a = BlockAllocator(num_blocks=8, block_size=16)
    assert a.allocate("a", 33) == [0, 1, 2]
    assert a.num_free() == 5


def test_append_fills_then_takes_a_block():
    a = BlockAllocator(num_blocks=8, block_size=4)
    a.allocate("a", 3)
    assert a.append("a") is None
    assert a.blocks("a") == [0]
    assert a.append("a") is None
    assert a.blocks("a") == [0, 1]


def test_free_returns_blocks():
    a = BlockAllocator(num_blocks=4, block_size=4)
    a.allocate("a", 16)
    a.free("a")
    assert a.num_free() == 4
