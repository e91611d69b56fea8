"""The `Delivery`: a producer's text to its target, through the durable outbox.

Each producer (a cron run, the heartbeat, an alert) calls `deliver(target, text, key=...)`
and gets a verdict; this is where the rules every producer shares are applied once:

- the target is resolved (`owner` becomes the `[gateway] owner` target) and checked (see
  `targets.py`); a bad one is a `DeliveryError` naming it, never a silent drop;
- a reply that is exactly `[SILENT]` (whitespace aside) is not delivered (`silent`);
- in quiet hours (`DndChecker.quiet_until`) a non-urgent delivery is enqueued *held*: not
  claimable before the quiet period ends. For the indefinite toggle (no end is known) it
  waits at `HELD_FOREVER` until `seam dnd off` releases it (`quiet.release_held`);
- everything else is enqueued at once (`queued`).

The outbox is idempotent by key, so delivering the same key twice (a resumed run, two
schedulers) enqueues one item; the verdict then describes the item already there. The
payload is JSON `{"text", "source", "urgent", "held"}` (`held`: it waited for quiet hours);
the outbox's senders read `text` (and the webhook sender `source`).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Collection
from dataclasses import KW_ONLY, dataclass
from pathlib import Path

from seam.contracts.delivery import SILENT, DeliveryError, DeliveryResult, Notice
from seam.contracts.dnd import DndChecker
from seam.contracts.outbox import Outbox, OutboxItem, Outgoing
from seam.plugins.delivery.targets import NONE, OWNER, canonical_target

# The `not_before` of an item held by the indefinite toggle: 9999-12-31, far enough to
# mean "not until released", finite so every store keeps it as an ordinary number.
HELD_FOREVER = 253_402_300_799.0
OWNER_KEY = "[gateway] owner"


def is_silent(text: str) -> bool:
    """A reply that asks for nothing to be delivered: exactly `[SILENT]`, spaces aside."""
    return text.strip() == SILENT


@dataclass(eq=False)  # a service with identity, not a value
class DeliveryRouter:
    """A `Delivery` over an `Outbox`; `owner` is the `[gateway] owner` target (None: not
    configured), `deliveries` the folder `file:` targets live in, `chats` the chat
    platforms whose `<name>:<chat>` targets it takes (wiring's registry)."""

    outbox: Outbox
    _: KW_ONLY
    deliveries: Path
    owner: str | None = None
    dnd: DndChecker | None = None
    clock: Callable[[], float] = time.time
    chats: Collection[str] = ()

    def __post_init__(self) -> None:
        self.chats = tuple(self.chats)
        self.owner = self.owner.strip() if self.owner and self.owner.strip() else None

    def check_target(self, target: str) -> str:
        canonical = canonical_target(target, self.deliveries, self.chats)
        if canonical == OWNER:
            self.owner_target()  # `owner` with no owner configured fails now, not later
        return canonical

    def resolve(self, target: str) -> str:
        """The outbox target `target` delivers to (`owner` resolved); `none` stays."""
        canonical = self.check_target(target)
        return self.owner_target() if canonical == OWNER else canonical

    def owner_target(self) -> str:
        if self.owner is None:
            raise DeliveryError(
                f"delivery target owner: no {OWNER_KEY} is configured (set it in"
                ' config.toml, e.g. [gateway] owner = "telegram:123456789")'
            )
        try:
            canonical = canonical_target(self.owner, self.deliveries, self.chats)
        except DeliveryError as exc:
            raise DeliveryError(f"{OWNER_KEY} {self.owner!r}: {exc}") from None
        if canonical in (OWNER, NONE):
            raise DeliveryError(f"{OWNER_KEY} must name a chat, file or webhook, not {canonical!r}")
        return canonical

    async def deliver(self, target: str, text: str, notice: Notice) -> DeliveryResult:
        resolved = self.resolve(target)
        if resolved == NONE:
            return DeliveryResult("none")
        if is_silent(text):
            return DeliveryResult("silent")
        now = self.clock()
        until = None if notice.urgent or self.dnd is None else await self.dnd.quiet_until(now)
        not_before = None
        if until is not None:
            not_before = HELD_FOREVER if math.isinf(until) else until
        source = notice.source
        payload = {
            "text": text,
            "source": source,
            "urgent": notice.urgent,
            "held": until is not None,
        }
        item = await self.outbox.enqueue(
            notice.key,
            Outgoing(resolved, json.dumps(payload), source=source, not_before=not_before),
        )
        return DeliveryResult("held" if is_held(item, now) else "queued", item)


def payload_of(item: OutboxItem) -> dict[str, object] | None:
    """The item's payload when the router wrote it (it has `urgent`), else None: chat
    replies and other producers' items are never held or released here."""
    try:
        data = json.loads(item.payload)
    except ValueError:
        return None
    return data if isinstance(data, dict) and "urgent" in data else None


def is_held(item: OutboxItem, now: float) -> bool:
    """Pending and waiting for quiet hours to end: written held and its time not come,
    or held by `seam dnd on` after it was queued (`quiet.hold_queued`)."""
    data = payload_of(item)
    if item.status != "pending" or data is None or data.get("urgent"):
        return False
    return item.next_attempt_at >= HELD_FOREVER or (
        bool(data.get("held")) and item.next_attempt_at > now
    )
