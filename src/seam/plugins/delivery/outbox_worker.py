"""The deliverer: takes due items from the outbox, hands each to its sender, and records
the outcome, so what Seam produced reaches the person once it has been produced at all.

    deliverer = OutboxDeliverer(store, [FileSender(deliveries), WebhookSender()])
    async with deliverer:          # runs in the background until the block ends
        ...
    # or: await deliverer.run()    # runs until cancelled

One loop per registered sender claims that sender's prefix (`claim_due`, with a lease),
sends the claimed items, and records each outcome: `mark_sent`, or `mark_failed` with a
retry time on exponential back-off with jitter (1 s, 2 s, 4 s, ... capped at 10 min;
sooner or later as the platform's Retry-After says), or failed for good when the sender
says trying again cannot help or after `max_attempts` attempts. Between rounds it waits
in the outbox's `wait_for_outbox` (so an enqueue wakes it at once) or polls every `poll`
seconds. A slow sender delays only its own loop; within a round, items to different
targets are sent concurrently, items to one target one after another, oldest first (when
one is retried, the later ones to its target claimed with it wait behind it).

Delivery is at least once. A deliverer that dies between a send and its `mark_sent`
leaves the item leased; when the lease runs out another deliverer (or this one,
restarted) claims and sends it again. The senders make the repeat harmless where they
can (see `senders`); a send is cut off at half the lease, so a slow send is never
claimed twice while it is still going. Stopping (cancelling `run`, leaving the `async
with`) releases what was claimed and not recorded, for the next deliverer to take at once.

`on_result(item)` is called (sync or async) after every recorded outcome with the item as
stored: `status` sent / pending (retried at `next_attempt_at`) / failed, `last_error`,
`attempts`. Producers that keep their own ledger (cron) record delivery status there;
others read `outbox_item(key)` when they need it.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import random
import secrets
import socket
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Self

from seam.contracts.closing import ClosesOnExit
from seam.contracts.outbox import Outbox, OutboxItem, OutboxWaker
from seam.plugins.delivery.senders import DeliveryFailed, Sender

log = logging.getLogger("seam.delivery")

DEFAULT_LEASE = 60.0
DEFAULT_MAX_ATTEMPTS = 10
BASE_DELAY = 1.0
MAX_DELAY = 600.0
# How far the platform's Retry-After is honoured (a broken header must not park an item
# for a year).
MAX_RETRY_AFTER = 3600.0
STOPPED = "the deliverer stopped before recording a delivery"

OnResult = Callable[[OutboxItem], Awaitable[None] | None]


def default_owner() -> str:
    """A claim owner unique to this process (host, pid, a random tail)."""
    return f"deliverer:{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


class OutboxDeliverer(ClosesOnExit):
    def __init__(
        self,
        outbox: Outbox,
        senders: Iterable[Sender] = (),
        *,
        owner: str | None = None,
        lease: float = DEFAULT_LEASE,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        poll: float = 1.0,
        batch: int = 20,
        concurrency: int = 8,
        base_delay: float = BASE_DELAY,
        max_delay: float = MAX_DELAY,
        on_result: OnResult | None = None,
        clock: Callable[[], float] = time.time,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.outbox = outbox
        self.owner = owner or default_owner()
        self.lease = lease
        self.max_attempts = max_attempts
        self.poll = poll
        self.batch = batch
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.on_result = on_result
        self._clock = clock
        self._jitter = jitter
        self._slots = asyncio.Semaphore(concurrency)
        self._senders: dict[str, Sender] = {}
        self._loops: dict[str, asyncio.Task[None]] = {}
        self._running = False
        self._task: asyncio.Task[None] | None = None
        # Claimed by this deliverer and not recorded yet: released when it stops.
        self._unrecorded: dict[str, OutboxItem] = {}
        for sender in senders:
            self.register(sender)

    # Senders

    @property
    def senders(self) -> dict[str, Sender]:
        return dict(self._senders)

    def register(self, sender: Sender) -> None:
        """Deliver `sender.prefix` targets with `sender` (from now on, when running)."""
        if sender.prefix in self._senders:
            raise ValueError(f"a sender for {sender.prefix!r} is registered already")
        self._senders[sender.prefix] = sender
        if self._running:
            self._start(sender)

    async def unregister(self, prefix: str) -> None:
        """Stop delivering `prefix` (its claimed, unrecorded items are released)."""
        self._senders.pop(prefix, None)
        task = self._loops.pop(prefix, None)
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # Running

    async def run(self) -> None:
        """Deliver until cancelled."""
        if self._running:
            raise RuntimeError("this deliverer is running already")
        self._running = True
        try:
            for sender in self._senders.values():
                self._start(sender)
            await asyncio.get_running_loop().create_future()  # until cancelled
        finally:
            self._running = False
            loops = list(self._loops.values())
            self._loops.clear()
            for task in loops:
                task.cancel()
            for task in loops:
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def __aenter__(self) -> Self:
        self._task = asyncio.create_task(self.run(), name="outbox-deliverer")
        await asyncio.sleep(0)  # let it start its loops
        return self

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def _start(self, sender: Sender) -> None:
        self._loops[sender.prefix] = asyncio.create_task(
            self._loop(sender), name=f"outbox-deliverer:{sender.prefix}"
        )

    async def _loop(self, sender: Sender) -> None:
        failures = 0
        try:
            while True:
                try:
                    done = await self.deliver_due(sender)
                    failures = 0
                except Exception as exc:  # the store is unreachable: keep trying, quietly
                    failures += 1
                    if failures == 1 or failures % 60 == 0:
                        log.warning("outbox %r: claiming failed: %s", sender.prefix, exc)
                    done = []
                if not done:
                    await self._wait(self.poll * min(failures + 1, 30))
        except asyncio.CancelledError:
            await self._release(sender.prefix)
            raise

    async def _wait(self, seconds: float) -> None:
        if isinstance(self.outbox, OutboxWaker):
            await self.outbox.wait_for_outbox(seconds)
        else:
            await asyncio.sleep(seconds)

    async def _release(self, prefix: str) -> None:
        """Hand back what this loop claimed and did not record, due at once."""
        now = self._clock()
        for key, item in list(self._unrecorded.items()):
            if not item.target.startswith(prefix):
                continue
            self._unrecorded.pop(key, None)
            with contextlib.suppress(Exception):
                await self.outbox.mark_failed(key, STOPPED, retry_at=now)

    # One round

    async def deliver_due(self, sender: Sender | None = None) -> list[OutboxItem]:
        """One round: claim what is due for `sender` (default: every registered sender),
        send it, record the outcomes; the items as recorded. `run` repeats this."""
        senders = [sender] if sender is not None else list(self._senders.values())
        recorded: list[OutboxItem] = []
        for each in senders:
            claimed = await self.outbox.claim_due(
                each.prefix, self.owner, lease=self.lease, limit=self.batch
            )
            for item in claimed:
                self._unrecorded[item.key] = item
            by_target: dict[str, list[OutboxItem]] = {}
            for item in claimed:
                by_target.setdefault(item.target, []).append(item)
            results = await asyncio.gather(
                *(self._deliver_in_order(each, items) for items in by_target.values())
            )
            recorded.extend(item for batch in results for item in batch)
        return recorded

    async def _deliver_in_order(self, sender: Sender, items: list[OutboxItem]) -> list[OutboxItem]:
        recorded: list[OutboxItem] = []
        async with self._slots:
            waiting: OutboxItem | None = None
            for item in items:
                if waiting is not None:
                    # Keep the order of one target: retried together with the one before.
                    note = f"waiting behind {waiting.key!r} to the same target"
                    outcome = await self._record(
                        item,
                        self.outbox.mark_failed(item.key, note, retry_at=waiting.next_attempt_at),
                    )
                else:
                    outcome = await self._deliver_one(sender, item)
                    if outcome is not None and outcome.status == "pending":
                        waiting = outcome
                if outcome is not None:
                    recorded.append(outcome)
        return recorded

    async def _deliver_one(self, sender: Sender, item: OutboxItem) -> OutboxItem | None:
        if item.attempts > self.max_attempts:
            # Claimed again and again by deliverers that died sending it.
            error = f"gave up after {item.attempts - 1} attempts"
            if item.last_error:
                error += f"; last error: {item.last_error}"
            return await self._record(item, self.outbox.mark_failed(item.key, error, retry_at=None))
        permanent = False
        wait: float | None = None
        try:
            async with asyncio.timeout(self.lease / 2):
                delivered_id = await sender.send(item)
        except DeliveryFailed as exc:
            error, permanent, wait = exc.message, exc.permanent, exc.retry_after
        except TimeoutError:
            error = f"no answer within {self.lease / 2:g} s"
        except Exception as exc:
            log.warning("sender %r failed on %r", sender.prefix, item.key, exc_info=True)
            error = f"{type(exc).__name__}: {exc}"
        else:
            return await self._record(
                item, self.outbox.mark_sent(item.key, delivered_id=delivered_id)
            )
        retry_at: float | None = None
        if not permanent:
            if item.attempts >= self.max_attempts:
                error += f" (gave up after {item.attempts} attempts)"
            else:
                delay = self.backoff(item.attempts) if wait is None else min(wait, MAX_RETRY_AFTER)
                retry_at = self._clock() + delay
        log.info("outbox %r to %s failed: %s", item.key, item.target, error)
        return await self._record(item, self.outbox.mark_failed(item.key, error, retry_at=retry_at))

    def backoff(self, attempts: int) -> float:
        """Seconds before attempt `attempts + 1`: 1, 2, 4, ... capped at 10 min (by
        default), each within ±20 % so deliverers that failed together do not retry
        together."""
        delay = min(self.max_delay, self.base_delay * 2.0 ** min(max(attempts - 1, 0), 60))
        return min(self.max_delay, delay * (0.8 + 0.4 * self._jitter()))

    async def _record(self, item: OutboxItem, write: Awaitable[OutboxItem]) -> OutboxItem | None:
        try:
            stored = await write
        except Exception as exc:  # the lease runs out and the item comes back
            log.warning("outbox %r: recording the outcome failed: %s", item.key, exc)
            return None
        finally:
            self._unrecorded.pop(item.key, None)
        if self.on_result is not None:
            try:
                result = self.on_result(stored)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                log.warning("outbox on_result failed for %r", item.key, exc_info=True)
        return stored
