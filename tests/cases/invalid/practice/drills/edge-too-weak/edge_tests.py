def test_cost_above_burst_never_admitted():
    b = TokenBucket(rate=100.0, burst=1000.0)
    assert not b.admit(0.0, 1001.0)
