"""Claims and leases for the Coordinator: holding a claimed submission, letting it go,
finding who is dead, following another worker's events, and how long to wait.

A mixin of `Coordinator`, apart because it is the part that deals with other workers:
the lease renewed while a turn runs (losing it, or an abort, cancels the turn), the
submission handed back when this process stops, a running submission whose owner died
claimed here, and the events of one another worker is running replayed to a follower.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from seam.contracts.db import StoreUnavailable
from seam.contracts.events import AgentEvent
from seam.contracts.execution import (
    ABORTED,
    RUNNING,
    ClaimScope,
    EventQuery,
    ExecutionStore,
    LeaseLost,
    Submission,
)
from seam.contracts.tools import CancelToken
from seam.core.event_log import decode
from seam.core.timer_lane import LaneTimer, timer_lane

log = logging.getLogger("seam.coordinator")

T = TypeVar("T")
OnEvent = Callable[[AgentEvent], None]
# Which of these lease owners are known dead (a crashed process on this machine).
DeadOwners = Callable[[Sequence[str]], Sequence[str]]


class Leases:
    """The lease on a claimed submission and the other workers around it."""

    store: ExecutionStore
    owner: str
    lease: float
    _clock: Callable[[], float]
    _dead_owners: DeadOwners | None

    async def _leased(self, submission_id: str, work: Awaitable[T], cancel: CancelToken) -> T:
        """Await `work` while renewing the lease; losing it (or an abort) cancels `cancel`."""
        renewal = LeaseRenewal(self, submission_id, cancel)
        try:
            return await work
        finally:
            await renewal.stop()

    async def _renew_once(self, submission_id: str, cancel: CancelToken) -> bool:
        """Renew the lease once; False when it is lost (`cancel` is cancelled then)."""
        try:
            await self.store.renew(submission_id, self.owner, lease=self.lease)
            sub = await self.store.submission(submission_id)
        except LeaseLost:
            cancel.cancel("lease lost")
            return False
        except StoreUnavailable as exc:
            log.warning("could not renew the lease on %s: %s", submission_id, exc)
            return True
        except Exception:
            log.exception("could not renew the lease on %s", submission_id)
            return True
        if sub is not None and sub.abort_requested:
            cancel.cancel("aborted")
        return True

    async def _let_go(self, sub: Submission, cancel: CancelToken) -> None:
        """The task driving `sub` was cancelled (its process is stopping): settle it
        aborted when a stop was asked for (the token, an abort request), else hand it back
        to the queue, so it never waits out a lease or runs later against the user's wish."""
        try:
            current = await self._current(sub)
            if current.state != "running" or current.lease_owner != self.owner:
                return
            if cancel.cancelled or current.abort_requested:
                await self.store.settle(sub.id, self.owner, ABORTED)
            else:
                await self.store.release(sub.id, self.owner, not_before=self._clock())
        except Exception:
            log.exception("could not let go of %s", sub.id)

    async def _claim_ahead(self, sub: Submission) -> Submission | None:
        """Claim the submission `sub` waits behind in its session, if it is reclaimable."""
        for running in await self.store.submissions(sub.session_key, RUNNING):
            claimed = await self.store.claim(
                self.owner,
                lease=self.lease,
                scope=await self._scope(running.id),
            )
            if claimed is not None:
                return claimed
        return None

    async def _current(self, sub: Submission) -> Submission:
        current = await self.store.submission(sub.id)
        return current if current is not None else sub

    async def _scope(self, submission_id: str | None = None, *, dead: bool = True) -> ClaimScope:
        """What this coordinator's claim may take: only `submission_id` when given, and
        leases held by owners known dead (looked up only when `dead`)."""
        return ClaimScope(submission_id, await self._dead() if dead else ())

    async def _dead(self) -> Sequence[str]:
        if self._dead_owners is None:
            return ()
        running = await self.store.submissions(query=RUNNING)
        owners = sorted(
            {s.lease_owner for s in running if s.lease_owner and s.lease_owner != self.owner}
        )
        return self._dead_owners(owners) if owners else ()

    async def _seen_before(self, sub: Submission) -> int:
        """Where following a submission's events starts: its first stored event."""
        first = await self.store.events(sub.session_key, EventQuery(submission_id=sub.id, limit=1))
        if first:
            return first[0].first_seq - 1
        return await self.store.last_seq(sub.session_key)

    async def _follow(self, sub: Submission, seen: int, on_event: OnEvent) -> int:
        for record in await self.store.events(
            sub.session_key, EventQuery(after_seq=seen, submission_id=sub.id)
        ):
            for event in decode(record, seen):
                on_event(event)
            seen = max(seen, record.seq)
        return seen

    def _pause_before(self, sub: Submission) -> float:
        """How long to wait before looking at a submission again."""
        now = self._clock()
        if sub.state == "queued" and sub.not_before > now:
            return max(0.05, min(sub.not_before - now, 5.0))
        if sub.state == "running" and sub.lease_expires_at is not None:
            return max(0.05, min(sub.lease_expires_at - now, 1.0))
        return 1.0


class LeaseRenewal:
    """Renews a claim's lease every third of it until `stop`.

    A timer, not a task that sleeps: most turns end long before the first renewal is
    due, and a timer costs one heap entry where a task costs its creation, a step to its
    sleep and a cancellation (on every claim). The renewal itself runs as a task only
    when it is due, then the timer is armed again (unless the lease was lost)."""

    __slots__ = ("_cancel", "_leases", "_loop", "_stopped", "_submission_id", "_task", "_timer")

    def __init__(self, leases: Leases, submission_id: str, cancel: CancelToken) -> None:
        self._leases = leases
        self._submission_id = submission_id
        self._cancel = cancel
        self._loop = asyncio.get_running_loop()
        self._task: asyncio.Task[None] | None = None
        self._stopped = False
        self._timer: LaneTimer | None = None
        self._arm()

    def _arm(self) -> None:
        # The loop's lane for this delay (core/timer_lane.py): one heap entry for all claims.
        self._timer = timer_lane(self._leases.lease / 3, self._loop).call_later(self._due)

    def _due(self) -> None:
        self._timer = None
        self._task = self._loop.create_task(self._renew())

    async def _renew(self) -> None:
        keep = await self._leases._renew_once(self._submission_id, self._cancel)
        self._task = None
        if keep and not self._stopped:
            self._arm()

    async def stop(self) -> None:
        """No renewal after this; one under way is cancelled and waited for."""
        self._stopped = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        task = self._task
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
