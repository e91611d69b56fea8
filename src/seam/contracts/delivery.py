"""Delivering what the agent produced on its own time (a cron run's reply, a heartbeat's
finding, an alert) to where the person will see it.

A `Delivery` resolves the target (`owner`, `telegram:<chat>`, `file:<path>`, a webhook URL,
`none`), applies the rules every producer shares (a reply that is exactly `[SILENT]` is
not delivered; in quiet hours a non-urgent delivery waits until they end) and hands the
message to the durable outbox under the producer's idempotency key, so producing it twice
delivers it once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from seam.contracts.outbox import OutboxItem

SILENT = "[SILENT]"

DeliveryVerdict = Literal["queued", "held", "silent", "none"]


@dataclass(frozen=True, slots=True)
class Notice:
    """What a delivery is besides its target and text, one object the protocol and each
    `Delivery` take: `key` is the producer's idempotency key (delivering twice under one
    key delivers once), `source` names what produced it, `urgent` skips quiet hours."""

    key: str
    source: str | None = None
    urgent: bool = False


@dataclass(frozen=True, slots=True)
class DeliveryResult:
    verdict: DeliveryVerdict  # queued, held for quiet hours, dropped as [SILENT], or none
    item: OutboxItem | None = None  # the outbox row, when queued or held


class DeliveryError(ValueError):
    """The target is not one Seam can deliver to (unknown scheme, a path outside
    `$SEAM_HOME/deliveries/`, no `[gateway] owner` configured): a configuration error named
    in one line, never a silent drop."""


@runtime_checkable
class Delivery(Protocol):
    def check_target(self, target: str) -> str:
        """The target in canonical form, or `DeliveryError`; used to validate a job when it is
        created, long before anything is delivered."""
        ...

    async def deliver(self, target: str, text: str, notice: Notice) -> DeliveryResult: ...
