def _blocks(tokens: int, block_size: int) -> int:
    return -(-tokens // block_size)


def step(running, waiting, free_blocks, block_size):
    running = sorted((dict(r) for r in running), key=lambda r: r["arrival"])
    waiting = [dict(w) for w in waiting]
    preempted = []
    served = []
    queue = list(running)
    while queue:
        r = queue.pop(0)
        need = 1 if r["tokens"] % block_size == 0 else 0
        while need > free_blocks:
            victims = queue + [r]
            victim = max(victims, key=lambda x: x["arrival"])
            free_blocks += _blocks(victim["tokens"], block_size)
            victim["prompt"] = victim["tokens"]
            victim["tokens"] = 0
            preempted.append(victim)
            if victim is r:
                break
            queue.remove(victim)
        else:
            free_blocks -= need
            r["tokens"] += 1
            served.append(r)
    waiting = sorted(preempted, key=lambda x: x["arrival"]) + waiting
    if not preempted:
        while waiting and _blocks(waiting[0]["prompt"], block_size) <= free_blocks:
            w = waiting.pop(0)
            free_blocks -= _blocks(w["prompt"], block_size)
            w["tokens"] = w["prompt"]
            served.append(w)
    return sorted(served, key=lambda x: x["arrival"]), waiting, free_blocks
