"""A worker's loop: claim, drive, sleep until there may be work; in lanes side by side.

A mixin of `Coordinator` (`seam worker` runs it through `Runtime.work`), apart for size.
One lane runs one submission at a time. With `concurrency` lanes a worker runs that many
turns at once, each of a different session (a claim never takes a session that has a
submission running): a turn mostly waits (for the model, a tool, the store's round
trips), and the other lanes' turns run meanwhile. PostgreSQL, one worker process on two
cores: 471-484 settled/s with one lane, 753-778/s with four (docs/benchmarks.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, TypedDict, Unpack

from seam.contracts.db import StoreUnavailable
from seam.contracts.execution import ExecutionStore, Submission
from seam.core.coordinator_leases import OnEvent
from seam.core.coordinator_session import Resolve
from seam.core.loop_parts import check_keywords

log = logging.getLogger("seam.coordinator")


class WorkOptions(TypedDict, total=False):
    """`Coordinator.work`'s keywords (and `Runtime.work`'s): `stop` ends it (a new event,
    never set, when not given); `on_settled` hears of each settled submission;
    `idle_wait`, seconds between looks when nothing wakes it (5); `concurrency`, lanes
    side by side (1)."""

    stop: asyncio.Event | None
    on_event: OnEvent | None
    on_settled: Callable[[Submission], None] | None
    idle_wait: float
    concurrency: int


class Working:
    store: ExecutionStore
    owner: str

    if TYPE_CHECKING:

        async def drain_runnable(
            self,
            resolve: Resolve,
            on_event: OnEvent | None = None,
            stop: asyncio.Event | None = None,
        ) -> list[Submission]: ...

    async def work(self, resolve: Resolve, **options: Unpack[WorkOptions]) -> None:
        """A worker: drain, then sleep until the store says there may be work; until
        `stop` is set. `concurrency` lanes do so side by side, each running one
        submission at a time: a worker then runs that many turns at once (never two of
        one session: the claim sees to that), and the store's round trips and commits of
        one overlap another's model call and Python."""
        check_keywords(options, WorkOptions.__optional_keys__, "work")
        concurrency = options.get("concurrency", 1)
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        stop = options.get("stop") or asyncio.Event()
        on_event, on_settled = options.get("on_event"), options.get("on_settled")
        idle_wait = options.get("idle_wait", 5.0)
        async with asyncio.TaskGroup() as lanes:
            for _ in range(concurrency):
                lanes.create_task(self._lane(resolve, stop, on_event, on_settled, idle_wait))

    async def _lane(
        self,
        resolve: Resolve,
        stop: asyncio.Event,
        on_event: OnEvent | None,
        on_settled: Callable[[Submission], None] | None,
        idle_wait: float,
    ) -> None:
        while not stop.is_set():
            try:
                drained = await self.drain_runnable(resolve, on_event, stop)
            except StoreUnavailable as exc:  # an outage past the bound: no traceback
                log.warning("worker %s: the store is unavailable (%s)", self.owner, exc)
                drained = []
            except Exception:
                # The store itself failed (a dropped connection, a full disk): keep the
                # worker alive and try again after the idle wait.
                log.exception("worker %s could not drain the queue", self.owner)
                drained = []
            for sub in drained:
                if on_settled is not None and sub.state == "settled":
                    try:
                        on_settled(sub)
                    except Exception:  # a report that fails (a closed pipe) is not the work
                        log.exception("reporting %s failed", sub.id)
            if stop.is_set():
                return
            waiter = asyncio.ensure_future(self.store.wait_for_work(idle_wait))
            stopper = asyncio.ensure_future(stop.wait())
            try:
                await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in (waiter, stopper):
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
