def test_idle_never_banks_more_than_burst():
    b = TokenBucket(rate=100.0, burst=1000.0)
    assert b.admit(0.0, 1.0)
    assert b.tokens(3600.0) == 1000.0, "an idle hour refills to the burst, not beyond"
    assert b.admit(3600.0, 1000.0)
    assert not b.admit(3600.0, 1.0)


def test_cost_above_burst_never_admitted_and_drains_nothing():
    b = TokenBucket(rate=100.0, burst=1000.0)
    assert not b.admit(0.0, 1001.0)
    assert b.tokens(0.0) == 1000.0


def test_clock_stepping_back_refills_nothing():
    b = TokenBucket(rate=100.0, burst=1000.0)
    assert b.admit(10.0, 1000.0)
    assert not b.admit(9.0, 1.0), "time went backwards: no refill"
    assert b.tokens(10.5) == 50.0, "refill resumes from the latest time seen"
