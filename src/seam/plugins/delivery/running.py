"""The outbox's deliverer with the senders every surface has (files, webhooks) plus the
chat senders a surface adds, running in the background for as long as a block runs.

Several surfaces (or machines) may run one each: claims are leased, so each item goes to
one of them at a time.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Collection, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypedDict

from seam.contracts.outbox import Outbox
from seam.plugins.delivery.outbox_worker import OnResult, OutboxDeliverer
from seam.plugins.delivery.senders import FileSender, Sender, WebhookSender


class DelivererOptions(TypedDict, total=False):
    """What a surface may add to the deliverer: chat `senders`, an `on_result` callback
    (a delivery sent or failed for good), the `clock`, and the non-public hosts, addresses
    or networks webhooks may reach (`allow_private`)."""

    senders: Iterable[Sender]
    on_result: OnResult | None
    clock: Callable[[], float]
    allow_private: Collection[str]


@asynccontextmanager
async def running_deliverer(
    outbox: Outbox,
    deliveries: Path,
    *,
    senders: Iterable[Sender] = (),
    on_result: OnResult | None = None,
    clock: Callable[[], float] = time.time,
    allow_private: Collection[str] = (),
) -> AsyncIterator[OutboxDeliverer]:
    """An `OutboxDeliverer` with the file sender (rooted at `deliveries`), the webhook
    sender and `senders`, running until the block ends; more senders can be
    `register`ed meanwhile. The webhook sender's HTTP client is closed on the way out."""
    webhook = WebhookSender(allow=allow_private)
    deliverer = OutboxDeliverer(
        outbox,
        [FileSender(deliveries), webhook, *senders],
        on_result=on_result,
        clock=clock,
    )
    try:
        async with deliverer:
            yield deliverer
    finally:
        await webhook.aclose()
