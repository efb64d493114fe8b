class TokenBucket:
    """Refills without the cap: an idle hour banks an hour of tokens."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate = rate
        self.burst = burst
        self.level = float(burst)
        self.last = None

    def tokens(self, now: float) -> float:
        if self.last is None:
            return self.level
        return self.level + max(0.0, now - self.last) * self.rate

    def admit(self, now: float, cost: float) -> bool:
        self.level = self.tokens(now)
        self.last = now
        if cost > self.level:
            return False
        self.level -= cost
        return True
