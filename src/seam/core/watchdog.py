"""The streaming timeout: abandons a model call that has gone silent.

One timer per model call, re-armed lazily (a clock read per chunk, no timer or task per
chunk), and armed only while the loop waits on the model, so a slow consumer of the event
stream is never mistaken for a stalled model. The first arming, the one nearly every call
cancels, goes in the loop's lane for the timeout (`timer_lane.py`: one asyncio timer for
every call's watchdog, not a heap entry each); a re-check due sooner than a whole
timeout, rare (a call that streams for longer than the timeout), is a timer of its own.
"""

from __future__ import annotations

import asyncio
import time

from seam.core.timer_lane import LaneTimer, timer_lane


class StreamWatchdog:
    """Cancels a model stream that has produced nothing for `timeout` seconds."""

    __slots__ = ("_cm", "_handle", "_loop", "timeout", "waiting_since")

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        # In time.monotonic() seconds, the clock asyncio's default loop uses too.
        self.waiting_since: float | None = None
        self._loop = asyncio.get_running_loop()
        self._cm: asyncio.Timeout | None = None
        self._handle: LaneTimer | asyncio.TimerHandle | None = None

    def start(self, cm: asyncio.Timeout) -> None:
        self._cm = cm
        self._handle = timer_lane(self.timeout, self._loop).call_later(self._check)

    def _check(self) -> None:
        now = time.monotonic()
        since = self.waiting_since
        if since is not None and now - since >= self.timeout:
            assert self._cm is not None
            self._cm.reschedule(self._loop.time())
            return
        if since is None:
            self._handle = timer_lane(self.timeout, self._loop).call_later(self._check)
        else:
            self._handle = self._loop.call_later(since + self.timeout - now, self._check)

    def interrupt(self) -> None:
        """Cut a wait on the model short (the turn was cancelled)."""
        if self.waiting_since is not None and self._cm is not None:
            self._cm.reschedule(self._loop.time())

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
