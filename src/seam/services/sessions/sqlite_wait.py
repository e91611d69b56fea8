"""Waiting on a SQLite store: an in-process wake-up, or a look at the file now and then.

SQLite has no LISTEN/NOTIFY. Work this process writes sets an `asyncio.Event` at once;
work another process writes is found by looking at the file every `POLL_SECONDS`. The
queue's and the outbox's waits differ only in what they look for, so the timing lives
here once.
"""

from __future__ import annotations

import asyncio
import time

# How often an idle waiter looks at the file for what another process wrote.
POLL_SECONDS = 0.5


async def woken(wake: asyncio.Event, deadline: float) -> bool | None:
    """Wait on `wake` until the next look is due: True when it was set (and is now
    cleared), False when it is time to look at the file, None when `deadline` (on the
    `time.monotonic` clock) has passed."""
    left = deadline - time.monotonic()
    if left <= 0:
        return None
    try:
        async with asyncio.timeout(min(left, POLL_SECONDS)):
            await wake.wait()
    except TimeoutError:
        return False
    wake.clear()
    return True
