"""Delivery and quiet hours as the settings describe them.

The `Delivery` router (plugins/delivery/router.py) is built over the runtime's store,
which is also the outbox; `owner` is `[gateway] owner` (its section is the gateway's: read
here, handed in), `file:` targets live under `$SEAM_HOME/deliveries/`. The `DndChecker`
reads `[dnd] rules` and keeps the toggle in `$SEAM_HOME/dnd.json`, which the agent cannot
reach (`wiring/reach.py` denies all of `$SEAM_HOME`). What `seam dnd` / `/dnd` do is
plugins/delivery/dnd_command.py (re-exported here for the surfaces).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from seam.contracts.dnd import DndChecker
from seam.contracts.execution import ExecutionStore
from seam.contracts.outbox import Outbox
from seam.plugins.delivery.dnd_command import DndAction, clock_text, dnd_command, dnd_status
from seam.plugins.delivery.router import DeliveryRouter
from seam.plugins.dnd.checker import FileDndChecker
from seam.wiring.chat_platforms import platform_names
from seam.wiring.outbox import deliveries_root
from seam.wiring.settings import ConfigError, Settings

Clock = Callable[[], float]

__all__ = [
    "DeliveryRuntime",
    "DndAction",
    "build_delivery",
    "build_dnd",
    "clock_text",
    "deliveries_dir",
    "delivery_for",
    "dnd_command",
    "dnd_path",
    "dnd_status",
    "gateway_owner",
    "runtime_outbox",
    "runtime_settings",
]


class DeliveryRuntime(Protocol):
    """What delivery needs of a runtime (`wiring.runtime.Runtime` is one): its store,
    which is also the outbox, and the settings it was built from."""

    @property
    def store(self) -> ExecutionStore: ...

    @property
    def settings(self) -> Settings | None: ...


def deliveries_dir(settings: Settings) -> Path:
    """The folder `file:` targets name (the file sender's root: one definition)."""
    return deliveries_root(settings)


def dnd_path(settings: Settings) -> Path:
    return settings.home / "dnd.json"


def gateway_owner(settings: Settings) -> str | None:
    """`[gateway] owner` (e.g. "telegram:123456789"), or None when not configured. The
    section belongs to the gateway's settings; a dict or a model both read here."""
    section = getattr(settings.config, "gateway", None)
    if section is None:
        return None
    owner = section.get("owner") if isinstance(section, dict) else getattr(section, "owner", None)
    return (str(owner).strip() or None) if owner else None


def build_dnd(settings: Settings, *, clock: Clock = time.time) -> FileDndChecker:
    rules = [rule.rule() for rule in settings.config.dnd.rules]
    return FileDndChecker(rules, dnd_path(settings), clock=clock)


def build_delivery(
    settings: Settings,
    outbox: Outbox,
    *,
    dnd: DndChecker | None = None,
    clock: Clock = time.time,
) -> DeliveryRouter:
    return DeliveryRouter(
        outbox,
        deliveries=deliveries_dir(settings),
        owner=gateway_owner(settings),
        dnd=dnd if dnd is not None else build_dnd(settings, clock=clock),
        clock=clock,
        chats=platform_names(),
    )


def runtime_outbox(runtime: DeliveryRuntime) -> Outbox:
    store = runtime.store
    if not isinstance(store, Outbox):
        raise ConfigError(f"the store ({type(store).__name__}) has no outbox to deliver through")
    return store


def runtime_settings(runtime: DeliveryRuntime) -> Settings:
    if runtime.settings is None:
        raise ConfigError("delivery needs the runtime's settings (SEAM_HOME, [gateway] owner)")
    return runtime.settings


def delivery_for(
    runtime: DeliveryRuntime, *, dnd: DndChecker | None = None, clock: Clock = time.time
) -> DeliveryRouter:
    """The `Delivery` of a runtime built from settings (`create_runtime`)."""
    return build_delivery(runtime_settings(runtime), runtime_outbox(runtime), dnd=dnd, clock=clock)
