class BlockAllocator:
    def __init__(self, num_blocks: int, block_size: int) -> None:
        self.block_size = block_size
        self.free_ids = list(range(num_blocks))

    def allocate(self, seq: str, num_tokens: int) -> list[int]:
        raise NotImplementedError

    def fork(self, parent: str, child: str) -> None:
        raise NotImplementedError

    def append(self, seq: str):
        raise NotImplementedError

    def free(self, seq: str) -> None:
        raise NotImplementedError

    def blocks(self, seq: str) -> list[int]:
        raise NotImplementedError

    def num_free(self) -> int:
        return len(self.free_ids)
