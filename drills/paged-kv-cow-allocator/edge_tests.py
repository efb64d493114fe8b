def test_fork_shares_and_write_copies():
    a = BlockAllocator(num_blocks=8, block_size=4)
    a.allocate("p", 6)  # blocks 0, 1; block 1 holds 2 tokens
    a.fork("p", "c")
    assert a.num_free() == 6, "a fork copies nothing"
    assert a.append("c") == (1, 2), "the child's write into the shared block copies it first"
    assert a.blocks("c") == [0, 2] and a.blocks("p") == [0, 1]
    assert a.append("p") is None, "the parent is the last owner of block 1 now: no copy"


def test_full_shared_block_needs_no_copy():
    a = BlockAllocator(num_blocks=8, block_size=4)
    a.allocate("p", 8)
    a.fork("p", "c")
    assert a.append("c") is None, "a full last block is never written again"
    assert a.blocks("c") == [0, 1, 2]


def test_failed_allocation_takes_nothing():
    a = BlockAllocator(num_blocks=3, block_size=4)
    a.allocate("a", 4)
    try:
        a.allocate("b", 12)
    except MemoryError:
        pass
    else:
        raise AssertionError("3 blocks cannot fit in 2")
    assert a.num_free() == 2


def test_free_after_fork_keeps_shared_blocks():
    a = BlockAllocator(num_blocks=4, block_size=4)
    a.allocate("p", 8)
    a.fork("p", "c")
    a.free("p")
    assert a.num_free() == 2, "the child still holds both blocks"
    a.free("c")
    assert a.num_free() == 4


def test_block_count_at_exact_multiples():
    a = BlockAllocator(num_blocks=16, block_size=4)
    assert len(a.allocate("full", 8)) == 2, "8 tokens fill exactly 2 blocks of 4; a third would be waste"
    assert len(a.allocate("over", 9)) == 3, "one token past a boundary needs a new block"
    assert len(a.allocate("empty", 0)) == 1, "a sequence gets at least one block"
    assert a.num_free() == 10


def test_copy_then_free_returns_every_block():
    a = BlockAllocator(num_blocks=8, block_size=4)
    a.allocate("p", 6)
    a.fork("p", "c")
    assert a.append("c") == (1, 2)
    a.free("p")
    assert a.num_free() == 6, "block 1 had only p left after the copy, so it is free now"
    a.free("c")
    assert a.num_free() == 8, "a reference kept on the copied-from block would leak it"


def test_three_way_share_copies_until_the_last_owner():
    a = BlockAllocator(num_blocks=8, block_size=4)
    a.allocate("p", 6)
    a.fork("p", "c1")
    a.fork("p", "c2")
    assert a.append("c1") == (1, 2)
    assert a.append("c2") == (1, 3), "block 1 is still shared by p and c2"
    assert a.append("p") is None, "p is the last owner of block 1"
    assert a.blocks("p") == [0, 1] and a.blocks("c1") == [0, 2] and a.blocks("c2") == [0, 3]


def test_failed_copy_changes_nothing():
    a = BlockAllocator(num_blocks=2, block_size=4)
    a.allocate("p", 6)
    a.fork("p", "c")
    try:
        a.append("c")
    except MemoryError:
        pass
    else:
        raise AssertionError("the copy needs a third block")
    assert a.blocks("c") == [0, 1] and a.num_free() == 0
    a.free("p")
    assert a.append("c") is None, "c is the only owner now and writes in place"
    a.free("c")
    assert a.num_free() == 2
