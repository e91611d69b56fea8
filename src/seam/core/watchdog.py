"""The streaming timeout: abandons a model call that has gone silent.

One timer per model call, re-armed lazily (a clock read per chunk, no timer or task per
chunk), and armed only while the loop waits on the model, so a slow consumer of the event
stream is never mistaken for a stalled model.
"""

from __future__ import annotations

import asyncio
import time


class StreamWatchdog:
    """Cancels a model stream that has produced nothing for `timeout` seconds."""

    __slots__ = ("_cm", "_handle", "_loop", "timeout", "waiting_since")

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        # In time.monotonic() seconds, the clock asyncio's default loop uses too.
        self.waiting_since: float | None = None
        self._loop = asyncio.get_running_loop()
        self._cm: asyncio.Timeout | None = None
        self._handle: asyncio.TimerHandle | None = None

    def start(self, cm: asyncio.Timeout) -> None:
        self._cm = cm
        self._handle = self._loop.call_at(self._loop.time() + self.timeout, self._check)

    def _check(self) -> None:
        now = time.monotonic()
        since = self.waiting_since
        if since is not None and now - since >= self.timeout:
            assert self._cm is not None
            self._cm.reschedule(self._loop.time())
            return
        delay = self.timeout if since is None else since + self.timeout - now
        self._handle = self._loop.call_later(delay, self._check)

    def interrupt(self) -> None:
        """Cut a wait on the model short (the turn was cancelled)."""
        if self.waiting_since is not None and self._cm is not None:
            self._cm.reschedule(self._loop.time())

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
