"""What a surface runs beside its own loop so cron jobs happen there: the scheduler's
task and whatever else was entered on the way (the outbox's deliverer), ended together."""

from __future__ import annotations

import asyncio
import contextlib


class Background:
    """The scheduler's task (None: it could not start) and an exit stack of the other
    background parts; `stop()` cancels the one and closes the other."""

    def __init__(self) -> None:
        self.scheduler: asyncio.Task[None] | None = None
        self.stack = contextlib.AsyncExitStack()

    async def stop(self) -> None:
        if self.scheduler is not None:
            self.scheduler.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.scheduler
            self.scheduler = None
        await self.stack.aclose()


async def stop_background(background: Background | None) -> None:
    if background is not None:
        await background.stop()
