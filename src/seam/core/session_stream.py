"""A session's events as one stream: the store's event log after a point, then the
running turn's events not stored yet, then live ones, each sequence number once, in order.

A process that drives turns hands each event to `EventHub.publish` as it happens (no
store round trip on the hot path); the hub keeps the running turn's events so far, since
its text deltas reach the store in batches. `follow_session` replays the log first, then
the hub's copy, then what the hub publishes, skipping every number it already gave out.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncGenerator, Iterator

from seam.contracts.events import AgentEvent, Done
from seam.contracts.execution import ExecutionStore
from seam.contracts.sessions import SessionNotFound
from seam.core.event_log import decoded, replay

Batch = list[AgentEvent | None]


class EventChannel:
    """A turn's events, from the task that drives it to the one that reads them: a list
    and one waiter, so the reader wakes once for however many events arrived meanwhile
    (an `asyncio.Queue` wakes it once per event). `close` ends the reading."""

    __slots__ = ("_closed", "_items", "_waiter")

    def __init__(self) -> None:
        self._items: deque[AgentEvent] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False

    def put(self, event: AgentEvent) -> None:
        self._items.append(event)
        self._wake()

    def close(self) -> None:
        self._closed = True
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def events(self) -> AsyncGenerator[AgentEvent, None]:
        """Every event put, in order, until the channel is closed and drained."""
        items = self._items
        while True:
            while items:
                yield items.popleft()
            if self._closed:
                return
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None


class EventHub:
    """Live events by session key, plus the running turn's events so far (its text deltas
    may not have reached the store yet)."""

    def __init__(self) -> None:
        self._subscribers: dict[str, set[asyncio.Queue[AgentEvent]]] = {}
        self._current: dict[str, list[AgentEvent]] = {}

    def publish(self, event: AgentEvent) -> None:
        key = event.session_key
        current = self._current.setdefault(key, [])
        if current and event.seq <= current[-1].seq:
            return  # a follower's replay of what was already published
        if isinstance(event, Done):
            # Everything up to `done` is in the store once `done` is published.
            del self._current[key]
        else:
            current.append(event)
        for queue in self._subscribers.get(key, ()):
            queue.put_nowait(event)

    def current(self, key: str) -> list[AgentEvent]:
        return list(self._current.get(key, ()))

    @contextlib.contextmanager
    def subscribe(self, key: str) -> Iterator[asyncio.Queue[AgentEvent]]:
        queue: asyncio.Queue[AgentEvent] = asyncio.Queue()
        self._subscribers.setdefault(key, set()).add(queue)
        try:
            yield queue
        finally:
            queues = self._subscribers.get(key)
            if queues is not None:
                queues.discard(queue)
                if not queues:
                    del self._subscribers[key]


async def follow_session(
    store: ExecutionStore,
    hub: EventHub,
    key: str,
    after: int,
    heartbeat: float,
    *,
    opening: bool = False,
) -> AsyncGenerator[Batch, None]:
    """The session's events after `after`, in batches: whatever is ready at once comes as
    one list (a stream writes it with one send: on a busy server a burst of events costs
    one syscall). `[None]` is a heartbeat, after `heartbeat` idle seconds.

    `opening`: the first batch comes at once, even empty, read with the session's row
    (`ExecutionStore.session_events`), and SessionNotFound is raised instead when there
    is no such session: a server opening many streams makes one read each, not two, and
    writes the first batch with the stream's head."""
    with hub.subscribe(key) as queue:
        # The log is read after subscribing: what is published meanwhile is not missed.
        if opening:
            records = await store.session_events(key, after)
            if records is None:
                raise SessionNotFound(f"no session {key!r}")
            batch, last = _caught_up([*decoded(records, after), *hub.current(key)], after)
            yield batch
        else:
            batch, last = await _catch_up(store, hub, key, after)
            if batch:
                yield batch
        while True:
            ready = await _ready(queue, heartbeat)
            if ready is None:
                yield [None]
                # Look at the store again: a safety net, cheap when idle.
                batch, last = await _catch_up(store, hub, key, last)
            else:
                batch, last = await _live(store, key, last, ready)
            if batch:
                yield batch


async def _catch_up(store: ExecutionStore, hub: EventHub, key: str, last: int) -> tuple[Batch, int]:
    """What the log holds after `last`, then the hub's copy of the running turn."""
    return _caught_up([*await replay(store, key, last), *hub.current(key)], last)


def _caught_up(events: list[AgentEvent], last: int) -> tuple[Batch, int]:
    """`events` after `last`, each number once, and the last number given."""
    batch: Batch = []
    for event in events:
        if event.seq > last:
            last = event.seq
            batch.append(event)
    return batch, last


async def _ready(queue: asyncio.Queue[AgentEvent], heartbeat: float) -> list[AgentEvent] | None:
    """Every event queued once one arrives; None when none came within `heartbeat`."""
    try:
        async with asyncio.timeout(heartbeat):
            ready = [await queue.get()]
    except TimeoutError:
        return None
    while not queue.empty():
        ready.append(queue.get_nowait())
    return ready


async def _live(
    store: ExecutionStore, key: str, last: int, ready: list[AgentEvent]
) -> tuple[Batch, int]:
    """The live events after `last`, with any gap before one filled from the log."""
    batch: Batch = []
    for event in ready:
        if event.seq <= last:
            continue
        if event.seq > last + 1:
            # Published before this stream subscribed and stored after its replay read
            # the log: the log has them now.
            for missed in await replay(store, key, last):
                if last < missed.seq < event.seq:
                    last = missed.seq
                    batch.append(missed)
        last = event.seq
        batch.append(event)
    return batch, last


__all__ = ["Batch", "EventHub", "follow_session"]
