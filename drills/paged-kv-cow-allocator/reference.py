import heapq


class BlockAllocator:
    def __init__(self, num_blocks: int, block_size: int) -> None:
        self.block_size = block_size
        self.free_ids = list(range(num_blocks))
        heapq.heapify(self.free_ids)
        self.refs: dict[int, int] = {}
        self.table: dict[str, list[int]] = {}
        self.length: dict[str, int] = {}

    def _take(self) -> int:
        block = heapq.heappop(self.free_ids)
        self.refs[block] = 1
        return block

    def _drop(self, block: int) -> None:
        self.refs[block] -= 1
        if self.refs[block] == 0:
            del self.refs[block]
            heapq.heappush(self.free_ids, block)

    def allocate(self, seq: str, num_tokens: int) -> list[int]:
        need = max(1, -(-num_tokens // self.block_size))
        if need > len(self.free_ids):
            raise MemoryError(f"{need} blocks needed, {len(self.free_ids)} free")
        self.table[seq] = [self._take() for _ in range(need)]
        self.length[seq] = num_tokens
        return list(self.table[seq])

    def fork(self, parent: str, child: str) -> None:
        self.table[child] = list(self.table[parent])
        self.length[child] = self.length[parent]
        for block in self.table[child]:
            self.refs[block] += 1

    def append(self, seq: str):
        table, n = self.table[seq], self.length[seq]
        if n == len(table) * self.block_size:
            if not self.free_ids:
                raise MemoryError("no free block")
            table.append(self._take())
            self.length[seq] = n + 1
            return None
        last = table[-1]
        if self.refs[last] > 1:
            if not self.free_ids:
                raise MemoryError("no free block for the copy")
            new = self._take()
            self._drop(last)
            table[-1] = new
            self.length[seq] = n + 1
            return (last, new)
        self.length[seq] = n + 1
        return None

    def free(self, seq: str) -> None:
        for block in self.table.pop(seq):
            self._drop(block)
        del self.length[seq]

    def blocks(self, seq: str) -> list[int]:
        return list(self.table[seq])

    def num_free(self) -> int:
        return len(self.free_ids)
