"""Handling the parked updates (`inbox.py`): retries with back-off until an update is
answered or dead, and a paired stranger's waiting message once they are approved.

One loop per platform looks every `TICK` seconds at the oldest parked row of each chat;
a chat's row is handled in a task of its own (one at a time per chat, so its order
holds), and a chat whose row waits for its back-off never holds up another chat.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

from seam.apps.gateway.inbox import (
    ATTEMPTS,
    RETRY_PREFIX,
    WAIT_FOR_PAIRING,
    WAIT_PREFIX,
    Inbox,
    chat_of,
    decode,
    one_line,
    retry_after,
    wait_target,
)
from seam.apps.gateway.sender import AdapterSlot
from seam.contracts.chat import ChatAdapter, ChatRef, InboundMessage
from seam.contracts.outbox import OutboxItem

log = logging.getLogger("seam.gateway")

TICK = 0.5


def failed_text(error: str) -> str:
    return (
        f"Sorry, I could not handle that message ({error}). "
        f"I will try again ({ATTEMPTS} tries in all)."
    )


def dead_text(tries: int, error: str) -> str:
    return (
        f"I gave up on that message after {tries} tries ({error}). "
        "It is kept as dead: `seam gateway status` lists it."
    )


class Handler(Protocol):
    """What the retries need of the gateway (`runner.Gateway`)."""

    def slot(self, platform: str) -> AdapterSlot: ...

    def allowed(self, platform: str, user_id: str) -> bool: ...

    async def handle_parked(self, adapter: ChatAdapter, msg: InboundMessage) -> None: ...

    def ready(self, sid: str) -> bool: ...

    def settled(self, sid: str) -> None: ...

    async def handle_paired(self, adapter: ChatAdapter, msg: InboundMessage, sid: str) -> None: ...

    async def tell(
        self, adapter: ChatAdapter, chat: ChatRef, source: str, text: str, kind: str
    ) -> None: ...


class Retries:
    """The parked updates of every platform this process holds, handled for `handler`."""

    def __init__(
        self,
        inbox: Inbox,
        handler: Handler,
        owner: str,
        *,
        tick: float = TICK,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.inbox = inbox
        self.handler = handler
        self.owner = f"{owner}:inbound"
        self._tick = tick
        self._clock = clock
        self._busy: set[str] = set()
        self._tasks: dict[asyncio.Task[Any], str] = {}

    async def run_forever(self, platform: str) -> None:
        """Handle `platform`'s parked updates as they come due; until cancelled."""
        try:
            while True:
                try:
                    await self.round(platform)
                except Exception:
                    log.exception("looking at the parked updates of %s failed", platform)
                await asyncio.sleep(self._tick)
        finally:
            await self.stop(platform)

    async def round(self, platform: str) -> None:
        """Start a task for each chat whose oldest parked row can be handled now."""
        adapter = self.handler.slot(platform).adapter
        if adapter is None:
            return
        now = self._clock()
        for item in await self.inbox.heads(f"{RETRY_PREFIX}{platform}:"):
            if item.next_attempt_at <= now and self.handler.ready(item.source or ""):
                self._start(item.target, self._retry(adapter, item.target))
        for item in await self.inbox.heads(f"{WAIT_PREFIX}{platform}:"):
            msg, _ = decode(item.payload)
            if self.handler.allowed(platform, msg.user_id):
                self._start(item.target, self._paired(adapter, item.target))
            elif item.created_at < now - WAIT_FOR_PAIRING:
                self._start(item.target, self._expire(item.target))

    async def run_waiting(self, adapter: ChatAdapter, chat: ChatRef) -> None:
        """Run `chat`'s message waiting for its writer's pairing now, if they are paired,
        before the update that just came: messages are answered in the order they were
        written, whenever the tick falls. A stranger still unpaired (in a group, say)
        waits on. Returns once it is admitted (or its task, already running, ended)."""
        waiting = await self.inbox.waiting_for_pairing(chat)
        if waiting is None or not self.handler.allowed(chat.platform, waiting.user_id):
            return
        target = wait_target(chat)
        task = self._start(target, self._paired(adapter, target))
        if task is not None:
            await asyncio.wait([task])

    def _start(self, target: str, work: Coroutine[Any, Any, None]) -> asyncio.Task[Any] | None:
        """`work` in a task of its own, or the task `target` already runs (then `work`
        is dropped): one at a time per chat."""
        if target in self._busy:
            work.close()
            return next((task for task, t in self._tasks.items() if t == target), None)
        self._busy.add(target)
        task = asyncio.ensure_future(work)
        self._tasks[task] = target

        def done(finished: asyncio.Task[Any]) -> None:
            self._busy.discard(target)
            self._tasks.pop(finished, None)
            if not finished.cancelled() and finished.exception() is not None:
                log.error("a parked update of %s failed: %s", target, finished.exception())

        task.add_done_callback(done)
        return task

    async def _retry(self, adapter: ChatAdapter, target: str) -> None:
        item = await self.inbox.claim(target, self.owner)
        if item is None:
            return
        msg, tried = decode(item.payload)
        try:
            await self.handler.handle_parked(adapter, msg)
        except Exception as exc:
            await self._failed(adapter, item, msg, tried + item.attempts, one_line(exc))
            return
        await self.inbox.outbox.mark_sent(item.key)
        self.handler.settled(item.source or item.key)

    async def _failed(
        self, adapter: ChatAdapter, item: OutboxItem, msg: InboundMessage, tries: int, error: str
    ) -> None:
        """Another try later, or dead when this was the last; the chat is told (once)."""
        source = item.source or item.key
        wait = retry_after(tries)
        if wait is None:
            await self.inbox.outbox.mark_failed(item.key, error, retry_at=None)
            self.handler.settled(source)
            log.warning("update %s is dead after %d tries: %s", source, tries, error)
            await self._tell(adapter, msg.chat, source, dead_text(tries, error), "dead")
            return
        await self.inbox.outbox.mark_failed(item.key, error, retry_at=self._clock() + wait)
        log.warning("update %s failed (try %d of %d): %s", source, tries, ATTEMPTS, error)
        await self._tell(adapter, msg.chat, source, failed_text(error), "error")

    async def _tell(
        self, adapter: ChatAdapter, chat: ChatRef, source: str, text: str, kind: str
    ) -> None:
        try:
            await self.handler.tell(adapter, chat, source, text, kind)
        except Exception as exc:  # the row says it; the chat hears it when it can
            log.warning("could not tell %s about update %s: %s", chat, source, exc)

    async def _paired(self, adapter: ChatAdapter, target: str) -> None:
        """Run a stranger's waiting message now that they are paired; a failure parks it
        for the retries, as any other update's."""
        item = await self.inbox.claim(target, self.owner)
        if item is None:
            return
        msg, _ = decode(item.payload)
        if not self.handler.allowed(msg.chat.platform, msg.user_id):
            return  # not paired (any more): it waits on, claimable again after its lease
        source = item.source or item.key
        try:
            await self.handler.handle_paired(adapter, msg, source)
        except Exception as exc:
            error = one_line(exc)
            await self.inbox.park(f"{source}:paired", msg, tried=1, error=error)
            await self._tell(adapter, msg.chat, f"{source}:paired", failed_text(error), "error")
        await self.inbox.outbox.mark_sent(item.key)

    async def _expire(self, target: str) -> None:
        item = await self.inbox.claim(target, self.owner)
        if item is not None:
            await self.inbox.outbox.mark_sent(item.key, delivered_id="expired")

    async def stop(self, platform: str | None = None) -> None:
        """Cancel the running tasks of `platform` (None: all); their rows are claimed
        again when their lease ends."""
        tasks = [
            task
            for task, target in self._tasks.items()
            if platform is None or chat_of(target).startswith(f"{platform}:")
        ]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


__all__ = ["TICK", "Handler", "Retries", "dead_text", "failed_text"]
