"""Riding out a store outage: how long the Coordinator waits before it resumes a
submission whose store became unreachable under it (`StoreUnavailable`: a PostgreSQL
restart, a SQLite file locked past its busy timeout).

The pauses grow, are jittered (so workers that met the same outage do not all come back
in step) and are bounded: once the schedule is spent the Coordinator stops riding it out
and lets the error go up. The submission then stays claimed until its lease lapses, and
whoever claims it next (another worker, the next start) resumes it from its transcript.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

# Seconds before resume n (1-based) after the store failed: 8 to 16 s in all (with the
# jitter) before giving up.
DEFAULT_STORE_BACKOFF = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class OutagePolicy:
    backoff: Sequence[float] = DEFAULT_STORE_BACKOFF
    sleep: Sleep = asyncio.sleep
    # A number in [0, 1): the jitter's source (a seeded one in tests).
    random: Callable[[], float] = random.random

    def pause(self, outage: int) -> float | None:
        """Seconds to wait before resuming after outage number `outage` (1-based): half
        to all of its scheduled pause; None once the schedule is spent."""
        if outage < 1 or outage > len(self.backoff):
            return None
        scheduled = self.backoff[outage - 1]
        return scheduled * (0.5 + 0.5 * self.random())
