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
