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
        renewal = asyncio.ensure_future(self._keep_lease(submission_id, cancel))
        try:
            return await work
        finally:
            renewal.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewal

    async def _keep_lease(self, submission_id: str, cancel: CancelToken) -> None:
        while True:
            await asyncio.sleep(self.lease / 3)
            try:
                await self.store.renew(submission_id, self.owner, lease=self.lease)
                sub = await self.store.submission(submission_id)
            except LeaseLost:
                cancel.cancel("lease lost")
                return
            except StoreUnavailable as exc:
                log.warning("could not renew the lease on %s: %s", submission_id, exc)
                continue
            except Exception:
                log.exception("could not renew the lease on %s", submission_id)
                continue
            if sub is not None and sub.abort_requested:
                cancel.cancel("aborted")

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
