class TokenBucket:
    def __init__(self, rate, burst)
        pass
