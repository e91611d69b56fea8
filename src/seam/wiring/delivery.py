"""Delivery and quiet hours as the settings describe them, and what `seam dnd` /
`/dnd` do.

The `Delivery` router (plugins/delivery/router.py) is built over the runtime's store,
which is also the outbox; `owner` is `[gateway] owner` (its section is the gateway's: read
here, handed in), `file:` targets live under `$SEAM_HOME/deliveries/`. The `DndChecker`
reads `[dnd] rules` and keeps the toggle in `$SEAM_HOME/dnd.json`, which the agent cannot
reach (`wiring/reach.py` denies all of `$SEAM_HOME`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from seam.contracts.dnd import DndChecker
from seam.contracts.outbox import Outbox
from seam.plugins.delivery.quiet import held_count, hold_queued, release_held
from seam.plugins.delivery.router import DeliveryRouter
from seam.plugins.dnd.checker import FileDndChecker
from seam.plugins.dnd.rules import describe, next_start
from seam.wiring.chat_platforms import platform_names
from seam.wiring.outbox import deliveries_root
from seam.wiring.settings import ConfigError, Settings

if TYPE_CHECKING:
    from seam.wiring.runtime import Runtime

Clock = Callable[[], float]
DndAction = Literal["on", "off", "status"]


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


def runtime_outbox(runtime: Runtime) -> Outbox:
    store = runtime.store
    if not isinstance(store, Outbox):
        raise ConfigError(f"the store ({type(store).__name__}) has no outbox to deliver through")
    return store


def runtime_settings(runtime: Runtime) -> Settings:
    if runtime.settings is None:
        raise ConfigError("delivery needs the runtime's settings (SEAM_HOME, [gateway] owner)")
    return runtime.settings


def delivery_for(
    runtime: Runtime, *, dnd: DndChecker | None = None, clock: Clock = time.time
) -> DeliveryRouter:
    """The `Delivery` of a runtime built from settings (`create_runtime`)."""
    return build_delivery(runtime_settings(runtime), runtime_outbox(runtime), dnd=dnd, clock=clock)


async def dnd_command(
    action: DndAction,
    dnd: FileDndChecker,
    outbox: Outbox | None,
    *,
    now: float | None = None,
) -> list[str]:
    """`seam dnd on|off|status` and `/dnd`: change the toggle and say where things stand.
    `off` releases the deliveries the toggle held; `on` holds the queued ones."""
    now = time.time() if now is None else now
    lines: list[str] = []
    if action == "on":
        await dnd.toggle_indefinite(True)
        held = await hold_queued(outbox, now) if outbox is not None else 0
        lines.append("do not disturb is on: deliveries wait until seam dnd off (urgent ones go)")
        if held:
            lines.append(f"holding {held} queued deliver{'y' if held == 1 else 'ies'}")
        return lines
    if action == "off":
        await dnd.toggle_indefinite(False)
        released = await release_held(outbox, dnd, now) if outbox is not None else 0
        lines.append("do not disturb is off")
        until = await dnd.quiet_until(now)
        if released:
            when = "now" if until is None else f"at {clock_text(until)} (quiet hours)"
            lines.append(
                f"releasing {released} held deliver{'y' if released == 1 else 'ies'} {when}"
            )
        elif until is not None:
            lines.append(f"a quiet-hours rule holds deliveries until {clock_text(until)}")
        return lines
    return await dnd_status(dnd, outbox, now)


async def dnd_status(dnd: FileDndChecker, outbox: Outbox | None, now: float) -> list[str]:
    state = await dnd.state()
    rules = await dnd.rules()
    if state.indefinite:
        since = f" since {clock_text(state.since)}" if state.since is not None else ""
        lines = [f"do not disturb: on{since} (seam dnd off ends it)"]
    else:
        lines = ["do not disturb: off"]
    until = await dnd.quiet_until(now)
    if until is not None and not math.isinf(until):
        lines.append(f"quiet now, until {clock_text(until)}")
    elif until is None:
        upcoming = next_start(rules, now)
        lines.append(
            "not quiet now"
            + (f"; next quiet hours from {clock_text(upcoming)}" if upcoming else "")
        )
    if rules:
        lines.append("rules: " + "; ".join(describe(rule) for rule in rules))
    else:
        lines.append("rules: none ([dnd] rules in config.toml)")
    if outbox is not None:
        lines.append(f"held deliveries: {await held_count(outbox, now)}")
    return lines


def clock_text(at: float) -> str:
    """A timestamp in this machine's local time, e.g. `2026-12-01 07:00 CET`."""
    return datetime.fromtimestamp(at).astimezone().strftime("%Y-%m-%d %H:%M %Z")
