"""What the Channels section shows: each gateway platform's state (what `seam gateway
status` prints: `apps/gateway/status.py`, `report.py`) and the pairing file (what `seam
pairing list` prints: `apps/gateway/pairing.py`), as JSON.

Everything is read fresh per request: the gateways write the status file every few
seconds, and the CLI changes the pairing file while the server runs.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any

from seam.apps.gateway.inbox import Inbox, chat_of
from seam.apps.gateway.pairing import PAIRING_FILE, PairingStore
from seam.apps.gateway.report import item_line
from seam.apps.gateway.status import read_status, status_path
from seam.contracts.outbox import Outbox, OutboxItem
from seam.wiring.chat_platforms import platform_names
from seam.wiring.gateway_settings import gateway_section
from seam.wiring.settings import ConfigError, Settings

# The columns of `seam gateway status`'s line for an update (`report.item_line`).
UPDATE_FIELDS = ("state", "chat", "source", "when", "error")


def pairing_store(settings: Settings) -> PairingStore:
    """The home's pairing file; with a `[gateway]` table that does not validate, its
    default cap (the page still shows and answers the codes waiting)."""
    try:
        return PairingStore.for_settings(settings)
    except ConfigError:
        return PairingStore(settings.home / PAIRING_FILE)


def configured(settings: Settings) -> tuple[set[str], str]:
    """The platforms with a `[gateway.<name>]` table, and the config's error ("" if none)."""
    try:
        return set(gateway_section(settings).platforms()), ""
    except ConfigError as exc:
        return set(), str(exc)


def update_row(state: str, item: OutboxItem) -> dict[str, str]:
    return dict(zip(UPDATE_FIELDS, item_line(state, item).split("\t", 4), strict=True))


async def updates(outbox: object) -> dict[str, list[dict[str, str]]]:
    """Dead and stuck updates by platform (none when the store keeps no outbox)."""
    found: dict[str, list[dict[str, str]]] = {}
    if not isinstance(outbox, Outbox):
        return found
    report = await Inbox(outbox).report()
    rows = [("dead", i) for i in report.dead] + [("stuck", i) for i in report.stuck]
    for state, item in rows:
        found.setdefault(chat_of(item.target).split(":")[0], []).append(update_row(state, item))
    return found


async def channels_state(settings: Settings, outbox: object) -> dict[str, Any]:
    """Every registered platform (configured or not, its adapter's last status, its dead
    and stuck updates), the codes waiting for approval and the paired users."""
    names, config_error = configured(settings)
    adapters = read_status(status_path(settings)).get("adapters", {})
    stuck = await updates(outbox)
    platforms = []
    for name in (*platform_names(), *sorted(set(adapters) - set(platform_names()))):
        entry = adapters.get(name)
        platforms.append(
            {
                "name": name,
                "configured": name in names,
                "status": dict(entry) if isinstance(entry, dict) else None,
                "updates": stuck.get(name, []),
            }
        )
    store = pairing_store(settings)
    now = time.time()
    pending = [
        {**asdict(item), "minutes_left": max(0, int(item.expires_at - now) // 60)}
        for item in store.pending()
    ]
    paired = [{**asdict(u), "ref": u.ref} for u in store.approved()]
    return {
        "platforms": platforms,
        "config_error": config_error,
        "pending": pending,
        "paired": paired,
        "now": now,
    }


__all__ = ["channels_state", "pairing_store"]
