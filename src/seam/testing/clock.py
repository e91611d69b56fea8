"""A clock for tests: stores, the Coordinator and the scheduler take their time from an
injected clock, so a test that moves it by hand gets exact timestamps and orderings."""

from __future__ import annotations


class ManualClock:
    """A clock tests move by hand, so timestamps and recency order are exact."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float = 1.0) -> None:
        self.now += seconds
