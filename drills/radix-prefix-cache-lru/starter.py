class PrefixCache:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity

    def match(self, blocks: list[tuple], now: float) -> int:
        raise NotImplementedError

    def insert(self, blocks: list[tuple], now: float) -> int:
        raise NotImplementedError

    def size(self) -> int:
        raise NotImplementedError
