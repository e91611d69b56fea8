"""Timers of one fixed delay on one event loop, behind a single asyncio timer.

Every turn arms a few timers that almost never fire: the model call's streaming watchdog
and the event log's flush (most are cancelled within milliseconds). Each one armed with
`loop.call_later` is a `TimerHandle` pushed on the loop's heap and later popped (a
cancelled one stays there until its time comes), and every push or pop compares
handles in Python: in a burst of a thousand turns the heap holds thousands of entries
and the loop spends a tenth of its time on it.

Timers armed with the same delay are due in the order they were armed (the loop's clock
never goes back), so a lane keeps them in a FIFO queue, O(1) to arm and to cancel, and
keeps one asyncio timer, for the first one that is due. When it fires it runs every
timer due by then (with the loop's own clock resolution, as asyncio does), skips the
cancelled ones, and arms again for the next. A callback runs exactly when, and as late
as, it would have run from `call_later`.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections import deque
from collections.abc import Callable

# Where a loop keeps its lanes, by delay.
_ATTRIBUTE = "_seam_timer_lanes"


# A lane drops its cancelled timers early once they are more than this many and half of
# it (as asyncio does with its heap): a 120 s watchdog cancelled after every model call
# would otherwise keep two minutes' worth of them.
COMPACT_AFTER = 100


class LaneTimer:
    """One timer of a lane: `cancel()` it as an `asyncio.TimerHandle`."""

    __slots__ = ("_lane", "callback", "context", "when")

    def __init__(self, lane: TimerLane, when: float, callback: Callable[[], object]) -> None:
        self._lane = lane
        self.when = when
        self.callback: Callable[[], object] | None = callback
        # Run in the context it was armed in, as `call_later` does (a task it starts
        # must not inherit another turn's context variables).
        self.context = contextvars.copy_context()

    def cancel(self) -> None:
        if self.callback is not None:
            self.callback = None
            self._lane.cancelled_one()

    def cancelled(self) -> bool:
        return self.callback is None


class TimerLane:
    """`call_later(callback)` after `delay` seconds on `loop`, one asyncio timer for all."""

    __slots__ = ("_cancelled", "_context", "_due", "_handle", "_loop", "_resolution", "delay")

    def __init__(self, loop: asyncio.AbstractEventLoop, delay: float) -> None:
        self.delay = delay
        self._loop = loop
        self._due: deque[LaneTimer] = deque()
        self._handle: asyncio.TimerHandle | None = None
        self._cancelled = 0  # cancelled timers still queued
        # The lane's own asyncio timer runs in no one's context: an empty one of its own
        # (one context cannot be entered by two threads' loops at once).
        self._context = contextvars.Context()
        # What asyncio adds to "now" when it picks the timers that are due.
        self._resolution: float = getattr(loop, "_clock_resolution", 0.0)

    def call_later(self, callback: Callable[[], object]) -> LaneTimer:
        timer = LaneTimer(self, self._loop.time() + self.delay, callback)
        due = self._due
        due.append(timer)
        # No asyncio timer is armed exactly when the queue was empty (while `_fire` runs
        # too: it arms for whatever is queued when it is done).
        if len(due) == 1 and self._handle is None:
            self._arm(timer.when)
        return timer

    def _arm(self, when: float) -> None:
        self._handle = self._loop.call_at(when, self._fire, context=self._context)

    def cancelled_one(self) -> None:
        self._cancelled += 1
        due = self._due
        if self._cancelled > COMPACT_AFTER and self._cancelled * 2 > len(due):
            live = [timer for timer in due if timer.callback is not None]
            due.clear()
            due.extend(live)
            self._cancelled = 0
            # The armed asyncio timer stays: firing early finds nothing due and re-arms.

    def _fire(self) -> None:
        self._handle = None
        due = self._due
        loop = self._loop
        end = loop.time() + self._resolution
        # At most the timers queued now: one armed by a callback (with a delay of 0)
        # waits for the next firing, as `call_later(0)` waits for the next iteration.
        for _ in range(len(due)):
            if not due or due[0].when > end:
                break
            timer = due.popleft()
            callback = timer.callback
            if callback is None:
                self._cancelled -= 1
                continue
            timer.callback = None  # fired: a later cancel() is a no-op, as asyncio's
            try:
                timer.context.run(callback)
            except (SystemExit, KeyboardInterrupt):
                raise
            except BaseException as exc:  # what asyncio does with a failing callback
                loop.call_exception_handler(
                    {"message": "Exception in a lane timer's callback", "exception": exc}
                )
        while due and due[0].callback is None:
            due.popleft()
            self._cancelled -= 1
        if due and self._handle is None:
            self._arm(due[0].when)


def timer_lane(delay: float, loop: asyncio.AbstractEventLoop | None = None) -> TimerLane:
    """The running loop's (or `loop`'s) lane for `delay`, made on first use. The lanes
    live on the loop itself, so they go with it (kept anywhere else, a lane's pending
    callbacks, which hold the loop, would keep every loop a process ever ran alive); a
    loop that takes no attribute gets a lane per timer, as plain `call_later`."""
    if loop is None:
        loop = asyncio.get_running_loop()
    lanes: dict[float, TimerLane] | None = getattr(loop, _ATTRIBUTE, None)
    if lanes is None:
        lanes = {}
        try:
            setattr(loop, _ATTRIBUTE, lanes)
        except AttributeError:
            return TimerLane(loop, delay)
    lane = lanes.get(delay)
    if lane is None:
        lane = lanes[delay] = TimerLane(loop, delay)
    return lane


__all__ = ["LaneTimer", "TimerLane", "timer_lane"]
