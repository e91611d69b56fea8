"""What `seam gateway status` prints and `seam doctor` checks: each adapter's state (the
status file the running gateways write) and the updates that did not go through (dead
after their retries, or stuck waiting for one: `inbox.py`)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from seam.apps.gateway.inbox import InboundReport, Inbox, chat_of
from seam.contracts.outbox import Outbox, OutboxItem

CLEAR_HINT = "see them with seam gateway status; dismiss the dead with seam gateway clear"


def counts(report: InboundReport) -> str:
    """`"1 dead, 0 stuck"`: the doctor's and the status's summary."""
    return f"{len(report.dead)} dead, {len(report.stuck)} stuck"


def adapter_lines(adapters: Mapping[str, Mapping[str, Any]], now: float) -> list[str]:
    """One line per adapter a gateway wrote about."""
    lines = []
    for name, entry in sorted(adapters.items()):
        last = entry.get("last_received_at")
        seen = f"last received {now - float(last):.0f} s ago" if last else "nothing received"
        error = f"; last error: {entry['last_error']}" if entry.get("last_error") else ""
        lines.append(f"{name}: {entry.get('state')}, {seen} (pid {entry.get('pid')}){error}")
    return lines


def item_line(state: str, item: OutboxItem) -> str:
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(item.updated_at))
    error = item.last_error or _parked_error(item.payload) or "-"
    return f"{state}\t{chat_of(item.target)}\t{item.source}\t{when}\t{error}"


def _parked_error(payload: str) -> str:
    """The first try's error, kept in the row when it was parked."""
    try:
        return str(json.loads(payload).get("error") or "")
    except (ValueError, AttributeError):
        return ""


async def update_lines(outbox: Outbox) -> list[str]:
    """The summary line, then a line per dead and per stuck update."""
    report = await Inbox(outbox).report()
    retrying = len(report.retrying) - len(report.stuck)
    lines = [f"updates: {counts(report)}, {retrying} waiting for a retry"]
    lines += [item_line("dead", item) for item in report.dead]
    lines += [item_line("stuck", item) for item in report.stuck]
    if report.dead or report.stuck:
        lines.append(CLEAR_HINT)
    return lines


__all__ = ["CLEAR_HINT", "adapter_lines", "counts", "item_line", "update_lines"]
