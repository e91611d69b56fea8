"""What `seam gateway` is built from: the chat adapters `[gateway]` configures, the lock
that lets one process hold each adapter, and the deliverer that sends a platform's outbox
items (through the gateway's `ChatSender`, apps/gateway/sender.py).

Adapters are built by the registered platforms' `ChatPlatform`s (`wiring/chat_platforms.py`),
whose builders import their SDK only when that platform is configured, so a gateway for
Telegram never imports Slack's or Discord's SDK, and the runtime never imports any of them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from seam.contracts.chat import AdapterBuilder, ChatAdapter
from seam.contracts.outbox import Outbox
from seam.contracts.store_backend import ProcessLock
from seam.plugins.delivery.senders import DeliveryFailed, Sender
from seam.services.sessions.file_lock import FileLock
from seam.services.sessions.postgres_lock import PostgresLock, advisory_key
from seam.wiring.chat_platforms import chat_platforms
from seam.wiring.gateway_settings import GatewaySection, gateway_section
from seam.wiring.settings import ConfigError, Settings
from seam.wiring.store_backends import backend_for, store_location

AdapterFactory = AdapterBuilder


@dataclass(frozen=True)
class AdapterSpec:
    """One configured platform: how to (re)build its adapter."""

    name: str
    build: Callable[[], ChatAdapter]


def adapter_specs(
    settings: Settings,
    *,
    registry: Mapping[str, AdapterFactory] | None = None,
    clock: Callable[[], float] = time.time,
) -> list[AdapterSpec]:
    """The adapters `[gateway]` configures, each built by its platform's `ChatPlatform`
    (`registry` replaces some platforms' builders: tests); ConfigError (one line) for a
    missing token or a platform whose adapter is not installed."""
    section = gateway_section(settings)
    platforms = chat_platforms()
    specs = []
    for name, table in section.platforms().items():
        platform = platforms[name]
        factory = (registry or {}).get(name, platform.build)
        for field in platform.token_fields:
            var = getattr(table, field)
            if not settings.env.get(var):
                raise ConfigError(
                    f"[gateway.{name}] {field}: the environment variable {var} is not set"
                )

        def build(
            factory: AdapterFactory = factory, table: Any = table, name: str = name
        ) -> ChatAdapter:
            try:
                return factory(table, settings.env, clock)
            except ImportError as exc:
                raise ConfigError(f"the {name} adapter is not installed ({exc})") from None

        specs.append(AdapterSpec(name, build))
    return specs


# Delivering what the outbox holds for a platform

# Seconds a claimed chat message is held (a send is cut off at half of it): a gateway
# killed mid-send has the message sent again by the next one this long after.
DELIVERY_LEASE = 20.0


async def deliver_forever(outbox: Outbox, sender: Sender, owner: str) -> None:
    """Send every due item for `sender.prefix` (the outbox's `OutboxDeliverer`: back-off
    with jitter, Retry-After, at most 10 attempts, claims released when stopped); until
    cancelled."""
    from seam.plugins.delivery.outbox_worker import OutboxDeliverer

    deliverer = OutboxDeliverer(
        outbox, [sender], owner=f"{owner}:{sender.prefix}", lease=DELIVERY_LEASE
    )
    await deliverer.run()


# One process holds each adapter

AdapterLock = ProcessLock


def adapter_lock(settings: Settings, name: str) -> AdapterLock:
    """The lock for adapter `name`: the store backend's own (PostgreSQL: an advisory lock,
    so gateways on several machines take turns), else a file lock under $SEAM_HOME."""
    where = store_location(settings)
    backend = backend_for(where.url)
    if backend.lock is not None:
        return backend.lock(where, name)
    return FileLock(settings.home / f"gateway-{name}.lock")


__all__ = [
    "AdapterLock",
    "AdapterSpec",
    "DeliveryFailed",
    "FileLock",
    "GatewaySection",
    "PostgresLock",
    "adapter_lock",
    "adapter_specs",
    "advisory_key",
    "deliver_forever",
    "gateway_section",
]
