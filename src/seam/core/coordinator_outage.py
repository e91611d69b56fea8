"""Riding out a store outage under a claim, a mixin of `Coordinator`.

Apart because it is one policy with one loop: when the store is unreachable for a moment
(`StoreUnavailable`: a database restart, a locked file), back off (`core/outage.py`),
renew the lease and run the claim again from what the store holds, the same repairs as
a resume after a crash; past the bound the error goes up and the lease lapses, for the
next claim to resume.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from seam.contracts.db import StoreUnavailable
from seam.contracts.execution import JournalEntry, LeaseLost, Submission
from seam.core.coordinator_leases import Leases
from seam.core.outage import OutagePolicy

log = logging.getLogger("seam.coordinator")


class OutageRetry(Leases):
    """`_drive_claim`: the claim's attempts, again after each outage of the store."""

    outage: OutagePolicy
    unwritten: dict[str, JournalEntry]

    async def _drive_claim(
        self, sub: Submission, attempt: Callable[[Submission], Awaitable[Submission]]
    ) -> Submission:
        """`attempt` at the claim (plan, repair, run, settle), run again from the store's
        state after each outage of the store (with the lease renewed first: a worker that
        lost it meanwhile stops there), until the outage policy gives up and the error
        goes up."""
        outages = 0
        while True:
            try:
                if outages:
                    await self.store.renew(sub.id, self.owner, lease=self.lease)
                    sub = await self._current(sub)  # `steps` moved on: the plan reads it
                return await attempt(sub)
            except LeaseLost:
                self.unwritten.pop(sub.id, None)  # its new holder writes its own
                return await self._current(sub)
            except StoreUnavailable as exc:
                outages += 1
                pause = self.outage.pause(outages)
                if pause is None:
                    log.warning("the store stayed unavailable; leaving %s to its lease", sub.id)
                    self.unwritten.pop(sub.id, None)  # the next claim asks again
                    raise
                log.warning(
                    "the store is unavailable (%s); resuming %s in %.2fs", exc, sub.id, pause
                )
                await self.outage.sleep(pause)
