"""The per-key (and per-tenant, per-address) rate limiter forgets callers: distinct
callers cannot grow it without end, and forgetting never makes it stricter."""

from __future__ import annotations

from seam.apps.web.auth import RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_ten_thousand_distinct_callers_leave_it_bounded() -> None:
    """One new caller every 10 ms for 100 s: only those of the last minute (a full
    refill) are remembered, whatever the total."""
    clock = Clock()
    limiter = RateLimiter(60, clock)
    sizes = []
    for n in range(10_000):
        assert limiter.allow(f"key-{n}") == 0.0
        clock.now += 0.01
        sizes.append(len(limiter))
    assert max(sizes) <= 6001
    assert len(limiter) <= 6001
    clock.now += 60.0
    limiter.allow("late")
    assert len(limiter) == 1


def test_a_burst_of_callers_at_one_instant_stops_at_the_cap() -> None:
    clock = Clock()
    limiter = RateLimiter(60, clock, max_callers=1000)
    for n in range(10_000):
        limiter.allow(f"addr-{n}")
    assert len(limiter) == 1000


def test_a_limited_caller_stays_limited_while_others_come_and_go() -> None:
    """The caller that used its burst is remembered while it is still limited, however
    many others pass (under the cap), so forgetting never lifts a limit early."""
    clock = Clock()
    limiter = RateLimiter(5, clock)
    for _ in range(5):
        assert limiter.allow("busy") == 0.0
    assert limiter.allow("busy") > 0
    for n in range(2000):
        limiter.allow(f"other-{n}")
    assert limiter.allow("busy") > 0
    clock.now += 60.0
    assert limiter.allow("busy") == 0.0
    assert len(limiter) == 1
