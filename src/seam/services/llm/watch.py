"""Bounded waiting on a streaming server: an idle limit per event and a request deadline.

httpx's own read timeout is per socket read, so a server that sends one byte a second
(or keeps the connection alive with `: ping` comments) never trips it. The watch counts
*parsed events* instead: the stream calls `waiting()` each time it goes back to the
server for more, and `got_event()` when a data event arrives. It fires only while the
stream is waiting on the server, never while the consumer holds a chunk, so a slow
consumer is not mistaken for a stalled server, and the cancellation it sends always lands
inside the stream's own read, not in the consumer's code.

One timer per request, re-armed lazily when it fires early: one clock read per event, no
timer churn on the hot path.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

Cause = Literal["idle", "deadline"]


class StreamWatch:
    """Guards one attempt's `async with`; on expiry the block raises `TimeoutError`.

    `idle` is seconds without a data event; `deadline` is loop time by which the whole
    request (every attempt) must be done. `cause` says which fired.
    """

    __slots__ = ("_cancelling", "_handle", "_loop", "_task", "cause", "deadline", "idle", "since")

    def __init__(self, idle: float, deadline: float) -> None:
        self.idle = idle
        self.deadline = deadline
        # Loop time of the last event while waiting on the server; None while the
        # consumer has a chunk.
        self.since: float | None = None
        self.cause: Cause | None = None

    async def __aenter__(self) -> StreamWatch:
        loop = self._loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None, "StreamWatch runs inside a task"
        self._task = task
        self._cancelling = task.cancelling()
        now = self.since = loop.time()
        if now >= self.deadline:
            self.cause = "deadline"
            raise TimeoutError
        self._handle = loop.call_at(min(now + self.idle, self.deadline), self._check)
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self._handle.cancel()
        if (
            self.cause is not None
            and exc_type is asyncio.CancelledError
            and self._task.uncancel() <= self._cancelling
        ):
            raise TimeoutError from exc

    def waiting(self) -> None:
        """Going back to the server for more: the deadline counts again (and may be past)."""
        now = self.since = self._loop.time()
        if now >= self.deadline:
            self.cause = "deadline"
            raise TimeoutError

    def got_event(self) -> None:
        """A data event arrived: the consumer's time starts, the server's stops."""
        self.since = None

    def _check(self) -> None:
        now = self._loop.time()
        since = self.since
        if since is not None:
            if now >= self.deadline:
                self._fire("deadline")
                return
            if now - since >= self.idle:
                self._fire("idle")
                return
            at = min(since + self.idle, self.deadline)
        else:
            # The consumer has a chunk; `waiting()` checks the deadline when it is back,
            # and the timer is due by the deadline in case the stream waits again first.
            at = now + self.idle
            if self.deadline > now:
                at = min(at, self.deadline)
        self._handle = self._loop.call_at(at, self._check)

    def _fire(self, cause: Cause) -> None:
        # Only called while the stream awaits the server, so the cancellation lands there.
        self.cause = cause
        self._task.cancel()
