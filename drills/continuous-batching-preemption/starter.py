def step(running: list[dict], waiting: list[dict], free_blocks: int, block_size: int):
    raise NotImplementedError
