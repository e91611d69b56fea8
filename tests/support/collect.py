"""A garbage collection a test can count on.

`gc.collect()` does nothing at all while another thread's collection is under way (one
whose finalizer let go of the GIL: closing a leftover SQLite connection of an earlier test
does), so a test that needs its garbage gone, or a pass counted, could find neither.
"""

from __future__ import annotations

import gc
import time


def passes() -> int:
    """How many collections this process has run (all generations)."""
    return sum(generation["collections"] for generation in gc.get_stats())


def collect() -> None:
    """Collect every generation once, for certain: while another thread's collection
    holds the collector, let it finish (a zero sleep lets go of the GIL) and try again."""
    before = passes()
    while True:
        gc.collect()
        if passes() != before:
            return
        time.sleep(0)
