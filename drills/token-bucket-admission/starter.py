class TokenBucket:
    def __init__(self, rate: float, burst: float) -> None:
        self.rate = rate
        self.burst = burst
        # your state here

    def tokens(self, now: float) -> float:
        raise NotImplementedError

    def admit(self, now: float, cost: float) -> bool:
        raise NotImplementedError
