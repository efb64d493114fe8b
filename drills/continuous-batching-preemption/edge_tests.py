def req(i, tokens, prompt=0):
    return {"id": i, "arrival": i, "tokens": tokens, "prompt": prompt}


def test_preempts_the_newest_arrival():
    running, waiting, free = step([req(0, 8), req(1, 4), req(2, 6)], [], free_blocks=0, block_size=4)
    assert [r["id"] for r in running] == [0, 1]
    assert [(w["id"], w["tokens"]) for w in waiting] == [(2, 0)]
    assert free == 0


def test_no_admission_in_a_step_that_preempted():
    running, waiting, free = step([req(0, 4), req(1, 5)], [req(2, 0, 1)], free_blocks=0, block_size=4)
    assert [w["id"] for w in waiting] == [1, 2], "the victim goes first and nothing is admitted"
    assert free == 1


def test_inputs_are_not_mutated():
    running = [req(0, 4)]
    step(running, [], free_blocks=1, block_size=4)
    assert running[0]["tokens"] == 4


def test_a_victim_recomputes_everything_it_held():
    running, waiting, free = step([req(0, 4), req(1, 7, prompt=3)], [], free_blocks=0, block_size=4)
    assert [(w["id"], w["tokens"], w["prompt"]) for w in waiting] == [(1, 0, 7)], "7 tokens to rebuild, not 3"
    running, waiting, free = step(running, waiting, free_blocks=free + 1, block_size=4)
    assert [(r["id"], r["tokens"]) for r in running] == [(0, 6), (1, 7)] and free == 0


def test_a_request_can_be_its_own_victim_and_victims_queue_oldest_first():
    running, waiting, free = step(
        [req(0, 4), req(1, 4), req(2, 4)], [req(3, 0, 1)], free_blocks=0, block_size=4
    )
    assert [(r["id"], r["tokens"]) for r in running] == [(0, 5)]
    assert [w["id"] for w in waiting] == [1, 2, 3], "1 preempted itself after 2 was taken; both ahead of 3"
    assert free == 1
