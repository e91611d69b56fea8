"""The outbox's deliverer as the settings describe it: files under
`$SEAM_HOME/deliveries/`, webhooks, and whatever chat senders the surface adds.

A surface that delivers (`seam worker`, `seam serve`, `seam gateway`) runs it for as long
as it runs, over the runtime's store (every store is also the outbox):

    async with running_deliverer(settings, runtime.store, senders=chat_senders) as deliverer:
        ...  # the surface's own loop

Several surfaces (or machines) may run one each: claims are leased, so each item goes to
one of them at a time.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from pathlib import Path

from seam.contracts.outbox import Outbox
from seam.plugins.delivery.outbox_worker import OnResult, OutboxDeliverer
from seam.plugins.delivery.senders import FileSender, Sender, WebhookSender
from seam.wiring.settings import Settings


def deliveries_root(settings: Settings) -> Path:
    """Where `file:` targets are delivered: `$SEAM_HOME/deliveries/`."""
    return settings.home / "deliveries"


@asynccontextmanager
async def running_deliverer(
    settings: Settings,
    outbox: Outbox,
    *,
    senders: Iterable[Sender] = (),
    on_result: OnResult | None = None,
    clock: Callable[[], float] = time.time,
) -> AsyncIterator[OutboxDeliverer]:
    """An `OutboxDeliverer` with the file and webhook senders (plus `senders`), running in
    the background until the block ends; more senders can be `register`ed meanwhile."""
    webhook = WebhookSender()
    deliverer = OutboxDeliverer(
        outbox,
        [FileSender(deliveries_root(settings)), webhook, *senders],
        on_result=on_result,
        clock=clock,
    )
    try:
        async with deliverer:
            yield deliverer
    finally:
        await webhook.aclose()
