class BlockAllocator:
    """Writes into a shared last block (no copy-on-write): a fork's token lands in its sibling's KV."""

    def __init__(self, num_blocks: int, block_size: int) -> None:
        self.block_size = block_size
        self.free_ids = list(range(num_blocks))
        self.refs: dict[int, int] = {}
        self.table: dict[str, list[int]] = {}
        self.length: dict[str, int] = {}

    def allocate(self, seq: str, num_tokens: int) -> list[int]:
        need = max(1, -(-num_tokens // self.block_size))
        if need > len(self.free_ids):
            raise MemoryError("out of blocks")
        got = [self.free_ids.pop(0) for _ in range(need)]
        for b in got:
            self.refs[b] = 1
        self.table[seq], self.length[seq] = got, num_tokens
        return list(got)

    def fork(self, parent: str, child: str) -> None:
        self.table[child] = list(self.table[parent])
        self.length[child] = self.length[parent]
        for b in self.table[child]:
            self.refs[b] += 1

    def append(self, seq: str):
        if self.length[seq] == len(self.table[seq]) * self.block_size:
            if not self.free_ids:
                raise MemoryError("out of blocks")
            b = self.free_ids.pop(0)
            self.refs[b] = 1
            self.table[seq].append(b)
        self.length[seq] += 1
        return None

    def free(self, seq: str) -> None:
        for b in self.table.pop(seq):
            self.refs[b] -= 1
            if self.refs[b] == 0:
                self.free_ids.append(b)
                self.free_ids.sort()
        del self.length[seq]

    def blocks(self, seq: str) -> list[int]:
        return list(self.table[seq])

    def num_free(self) -> int:
        return len(self.free_ids)
