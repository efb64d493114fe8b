class TokenBucket:
    def __init__(self, rate: float, burst: float) -> None:
        if rate <= 0 or burst <= 0:
            raise ValueError("rate and burst must be positive")
        self.rate = rate
        self.burst = burst
        self.level = float(burst)
        self.last = None

    def _refilled(self, now: float) -> float:
        if self.last is None or now <= self.last:
            return self.level
        return min(self.burst, self.level + (now - self.last) * self.rate)

    def tokens(self, now: float) -> float:
        return self._refilled(now)

    def admit(self, now: float, cost: float) -> bool:
        self.level = self._refilled(now)
        if self.last is None or now > self.last:
            self.last = now
        if cost > self.level:
            return False
        self.level -= cost
        return True
