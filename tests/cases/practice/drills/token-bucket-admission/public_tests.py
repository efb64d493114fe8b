def test_starts_full():
    b = TokenBucket(rate=100.0, burst=1000.0)
    assert b.tokens(0.0) == 1000.0


def test_admits_then_rejects():
    b = TokenBucket(rate=100.0, burst=1000.0)
    assert b.admit(0.0, 600.0)
    assert not b.admit(0.0, 600.0), "only 400 tokens are left"
    assert b.tokens(0.0) == 400.0, "a rejected request takes nothing"


def test_refills_at_rate():
    b = TokenBucket(rate=100.0, burst=1000.0)
    assert b.admit(0.0, 1000.0)
    assert b.tokens(2.5) == 250.0
    assert b.admit(3.0, 300.0)
