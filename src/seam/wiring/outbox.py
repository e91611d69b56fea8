"""The outbox's deliverer as the settings describe it: files under
`$SEAM_HOME/deliveries/`, webhooks, and whatever chat senders the surface adds
(plugins/delivery/running.py runs it).

A surface that delivers (`seam worker`, `seam serve`, `seam gateway`) runs it for as long
as it runs, over the runtime's store (every store is also the outbox):

    async with running_deliverer(settings, runtime.store, senders=chat_senders) as deliverer:
        ...  # the surface's own loop
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Unpack

from seam.contracts.outbox import Outbox
from seam.plugins.delivery.outbox_worker import OutboxDeliverer
from seam.plugins.delivery.running import DelivererOptions
from seam.plugins.delivery.running import running_deliverer as _running
from seam.wiring.settings import Settings


def deliveries_root(settings: Settings) -> Path:
    """Where `file:` targets are delivered: `$SEAM_HOME/deliveries/`."""
    return settings.home / "deliveries"


def running_deliverer(
    settings: Settings, outbox: Outbox, **options: Unpack[DelivererOptions]
) -> AbstractAsyncContextManager[OutboxDeliverer]:
    """The deliverer over `outbox` with `file:` targets under `deliveries_root`, running
    until the block ends (see plugins/delivery/running.py); webhooks reach the non-public
    addresses `[network] allow_private` lists, no others."""
    options.setdefault("allow_private", settings.config.network.allow_private)
    return _running(outbox, deliveries_root(settings), **options)
