"""`seam dnd on|off|status` and `/dnd`: turning do-not-disturb on and off, holding and
releasing the deliveries it concerns, and saying where things stand (the toggle, the
quiet-hours rules, what is held). wiring/delivery.py builds the checker from `[dnd]`."""

from __future__ import annotations

import math
import time
from datetime import datetime
from typing import Literal

from seam.contracts.outbox import Outbox
from seam.plugins.delivery.quiet import held_count, hold_queued, release_held
from seam.plugins.dnd.checker import FileDndChecker
from seam.plugins.dnd.rules import describe, next_start

DndAction = Literal["on", "off", "status"]


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
