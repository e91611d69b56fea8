"""TimerLane: fixed-delay timers behind one asyncio timer, each run exactly as
`loop.call_later` would run it (not before its time, in order, in its own context)."""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

from seam.core.timer_lane import TimerLane, timer_lane
from tests.support.collect import collect

DELAY = 0.02
who: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="")


def _lane_handles(loop: asyncio.AbstractEventLoop, lane: TimerLane) -> int:
    """How many entries the lane has in the loop's timer heap (live ones)."""
    scheduled: list[asyncio.TimerHandle] = loop._scheduled  # type: ignore[attr-defined]
    return sum(1 for h in scheduled if not h.cancelled() and h._callback == lane._fire)  # type: ignore[attr-defined]


async def test_timers_run_in_order_never_early_behind_one_asyncio_timer() -> None:
    loop = asyncio.get_running_loop()
    lane = timer_lane(DELAY)
    assert timer_lane(DELAY) is lane and timer_lane(DELAY * 2) is not lane
    ran: list[tuple[int, float, float]] = []
    done = loop.create_future()

    def fired(index: int, armed: float) -> None:
        ran.append((index, armed, loop.time()))
        if len(ran) == 500:
            done.set_result(None)

    for index in range(1000):
        armed = loop.time()
        timer = lane.call_later(lambda i=index, t=armed: fired(i, t))
        if index % 2:
            timer.cancel()
    assert _lane_handles(loop, lane) == 1
    await done
    assert [index for index, _, _ in ran] == list(range(0, 1000, 2))
    resolution: float = loop._clock_resolution  # type: ignore[attr-defined]
    assert all(at >= armed + DELAY - resolution for _, armed, at in ran)


async def test_a_callback_runs_in_the_context_it_was_armed_in_and_may_rearm() -> None:
    loop = asyncio.get_running_loop()
    lane = timer_lane(DELAY)
    seen: list[str] = []
    done = loop.create_future()

    def fired() -> None:
        seen.append(who.get())
        if len(seen) == 2:
            done.set_result(None)
        elif len(seen) == 1:
            lane.call_later(fired)  # re-armed from inside the lane's own firing

    def arm(name: str) -> None:
        who.set(name)
        lane.call_later(fired)

    contextvars.copy_context().run(arm, "turn-a")
    await done
    assert seen == ["turn-a", "turn-a"]
    assert who.get() == ""


async def test_a_failing_callback_is_reported_and_the_others_still_run() -> None:
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _, context: reported.append(context))
    lane = timer_lane(DELAY)
    done = loop.create_future()

    def boom() -> None:
        raise ValueError("boom")

    lane.call_later(boom)
    lane.call_later(lambda: done.set_result(None))
    await done
    assert [type(c["exception"]) for c in reported] == [ValueError]


async def test_cancelled_timers_are_dropped_before_their_time() -> None:
    loop = asyncio.get_running_loop()
    lane = TimerLane(loop, 60.0)  # due in a minute: only a compaction drops them early
    timers = [lane.call_later(lambda: None) for _ in range(1000)]
    for timer in timers[:900]:
        timer.cancel()
    assert len(lane._due) < 200
    assert sum(timer.callback is not None for timer in lane._due) == 100
    for timer in timers[900:]:
        timer.cancel()
    assert len(lane._due) <= 100


async def test_a_zero_delay_timer_armed_while_firing_waits_for_the_next_firing() -> None:
    loop = asyncio.get_running_loop()
    lane = TimerLane(loop, 0.0)
    passes: list[int] = []
    done = loop.create_future()

    def again() -> None:
        passes.append(len(passes))
        if len(passes) < 3:
            lane.call_later(again)
        else:
            done.set_result(None)

    lane.call_later(again)
    await done
    assert passes == [0, 1, 2]


def test_a_closed_loop_with_a_pending_lane_timer_is_collected() -> None:
    """The lanes live on their loop: a timer still pending when the loop closes (whose
    callback holds the loop) does not keep the loop alive."""
    import weakref

    loop = asyncio.new_event_loop()

    async def arm() -> None:
        running = asyncio.get_running_loop()
        timer_lane(60.0).call_later(lambda: running.time())

    loop.run_until_complete(arm())
    loop.close()
    gone = weakref.ref(loop)
    del loop
    collect()
    assert gone() is None
