def req(i, tokens, prompt=0):
    return {"id": i, "arrival": i, "tokens": tokens, "prompt": prompt}


def test_decode_within_blocks_takes_nothing():
    running, waiting, free = step([req(0, 5), req(1, 9)], [], free_blocks=2, block_size=4)
    assert [r["tokens"] for r in running] == [6, 10] and free == 2


def test_decode_at_a_block_boundary_takes_a_block():
    running, waiting, free = step([req(0, 8)], [], free_blocks=1, block_size=4)
    assert running[0]["tokens"] == 9 and free == 0


def test_admits_in_order_while_prompts_fit():
    running, waiting, free = step([], [req(0, 0, 8), req(1, 0, 8), req(2, 0, 4)], free_blocks=4, block_size=4)
    assert [r["id"] for r in running] == [0, 1] and [w["id"] for w in waiting] == [2] and free == 0
