"""Turns run in the background: every unsettled submission gets one driver task here,
which runs it (or follows it from the store while another process runs it, or takes it
over when that process died and its lease is reclaimable) and hands each event on.

A rescuer looks at the store every few seconds for submissions nobody here drives yet:
another process's turns to follow, a dead process's turns to take over, queued ones.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from seam.contracts.events import AgentEvent
from seam.contracts.execution import UNSETTLED, Submission
from seam.contracts.tools import CancelToken
from seam.wiring.runtime import Runtime

log = logging.getLogger("seam.web")

# Seconds between looks at the store for submissions nobody here drives (another
# process's turns to follow, a dead process's turns to take over, queued ones).
RESCUE_SECONDS = 2.0
# Seconds the server waits, when it stops, for cancelled turns to settle.
STOP_SECONDS = 2.0

# Each event of a turn driven here; each turn's outcome once it settles.
OnEvent = Callable[[AgentEvent], None]
OnSettled = Callable[[str | None], None]


class TurnDrivers:
    """One background task per submission driven here, each with its cancel token."""

    def __init__(
        self, runtime: Runtime, on_event: OnEvent, on_settled: OnSettled, rescue_seconds: float
    ) -> None:
        self.runtime = runtime
        self._on_event = on_event
        self._on_settled = on_settled
        self._rescue_seconds = rescue_seconds
        self._drivers: dict[str, asyncio.Task[None]] = {}
        self._cancels: dict[str, CancelToken] = {}
        self._rescuer: asyncio.Task[None] | None = None

    def __contains__(self, submission_id: str) -> bool:
        return submission_id in self._drivers

    def start(self) -> None:
        self._rescuer = asyncio.ensure_future(self._rescue_forever())

    async def stop(self) -> None:
        """Stop looking, cancel every turn driven here, and wait (briefly) for them."""
        if self._rescuer is not None:
            self._rescuer.cancel()
            await asyncio.gather(self._rescuer, return_exceptions=True)
        for token in self._cancels.values():
            token.cancel("the server is stopping")
        drivers = list(self._drivers.values())
        if drivers:
            await asyncio.wait(drivers, timeout=STOP_SECONDS)
        for task in drivers:
            task.cancel()
        await asyncio.gather(*drivers, return_exceptions=True)

    def drive(self, submission_id: str, *, admitted: Submission | None = None) -> None:
        """Run (or follow, while another process runs it) a submission in the background.
        `admitted`: the submission as just admitted (saves reading it back)."""
        if submission_id in self._drivers:
            return
        token = CancelToken()
        self._cancels[submission_id] = token
        task = asyncio.ensure_future(self._run(submission_id, token, admitted))
        self._drivers[submission_id] = task

    async def _run(
        self, submission_id: str, token: CancelToken, admitted: Submission | None = None
    ) -> None:
        runtime = self.runtime
        try:
            sub = await runtime.drive(
                submission_id, self._on_event, cancel=token, admitted=admitted
            )
            self._on_settled(sub.outcome)
        except Exception:
            log.exception("driving submission %s failed", submission_id)
        finally:
            self._drivers.pop(submission_id, None)
            self._cancels.pop(submission_id, None)

    async def _rescue_forever(self) -> None:
        """Drive (or follow) every unsettled submission nobody here drives yet."""
        while True:
            try:
                for sub in await self.runtime.store.submissions(query=UNSETTLED):
                    if sub.id not in self._drivers:
                        self.drive(sub.id)
            except Exception:
                log.exception("looking for submissions to drive failed")
            await asyncio.sleep(self._rescue_seconds)

    async def abort(self, sub: Submission, reason: str) -> Submission:
        """Stop a submission: its turn here at once, wherever it runs through the store."""
        token = self._cancels.get(sub.id)
        if token is not None:
            token.cancel(reason)
        return await self.runtime.abort(sub.id)


__all__ = ["RESCUE_SECONDS", "TurnDrivers"]
