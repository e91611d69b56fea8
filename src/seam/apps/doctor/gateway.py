"""The gateway's lines in `seam doctor`: for each configured platform, whether its token
is set (its `ChatPlatform.token_fields`), and what the running gateway last wrote about it
(state, last receipt); and the updates that are dead or stuck (`updates_check`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from seam.apps.doctor.check import Check
from seam.apps.gateway.status import read_status, status_path
from seam.wiring.chat_platforms import chat_platforms
from seam.wiring.gateway_settings import gateway_section
from seam.wiring.settings import ConfigError, Settings

UPDATES = "gateway updates"
# A status entry older than this means no gateway is running that adapter now.
STALE_AFTER = 60.0


def gateway_checks(settings: Settings, *, clock: Callable[[], float] = time.time) -> list[Check]:
    """A check per platform `[gateway]` configures; none when nothing is configured."""
    try:
        section = gateway_section(settings)
    except ConfigError as exc:
        return [Check("gateway", False, str(exc), "fix [gateway] in config.toml")]
    platforms = section.platforms()
    if not platforms:
        return []
    status = read_status(status_path(settings)).get("adapters", {})
    now = clock()
    registered = chat_platforms()
    checks = []
    for name, table in platforms.items():
        fields = registered[name].token_fields
        missing = [getattr(table, f) for f in fields if not settings.env.get(getattr(table, f))]
        if missing:
            hint = "export the bot token(s) before seam gateway"
            checks.append(Check(f"gateway {name}", False, f"{', '.join(missing)} not set", hint))
        else:
            checks.append(_running(name, status.get(name), now))
    return checks


def _running(name: str, entry: Mapping[str, Any] | None, now: float) -> Check:
    """What the status file says of a platform whose tokens are set."""
    if not entry or now - float(entry.get("updated_at", 0)) > STALE_AFTER:
        detail = "configured; no gateway is running it (start: seam gateway)"
        return Check(f"gateway {name}", True, detail)
    state = str(entry.get("state"))
    last = entry.get("last_received_at")
    seen = f"last received {_ago(now - float(last))} ago" if last else "nothing received yet"
    detail = f"{state}, {seen} (pid {entry.get('pid')})"
    if entry.get("last_error"):
        detail += f"; last error: {entry['last_error']}"
    ok = state in ("connected", "standby", "starting")
    hint = "" if ok else "see the gateway's log; it keeps reconnecting"
    return Check(f"gateway {name}", ok, detail, hint)


def _ago(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


async def updates_check(settings: Settings) -> Check | None:
    """The gateway's updates that did not go through: ✗ with the counts when any is dead
    (after its retries) or stuck (waiting for a retry no gateway runs); None when no
    platform is configured."""
    from seam.apps.gateway.inbox import Inbox
    from seam.apps.gateway.report import CLEAR_HINT, counts
    from seam.contracts.outbox import Outbox
    from seam.wiring.store_backends import open_store, store_location

    try:
        if not gateway_section(settings).platforms():
            return None
    except ConfigError:
        return None  # `gateway_checks` says what is wrong
    where = store_location(settings)
    if where.url is None and not settings.store_path.exists():
        return Check(UPDATES, True, "none yet (no store)")
    store = open_store(where)
    try:
        opener = getattr(store, "open", None)
        if opener is not None:
            await opener()
        if not isinstance(store, Outbox):
            return None
        report = await Inbox(store).report()
    except Exception as exc:  # the store's own line says what is wrong with it
        return Check(UPDATES, False, f"could not read them: {exc}", "see the session store line")
    finally:
        await store.aclose()
    ok = not report.dead and not report.stuck
    return Check(UPDATES, ok, counts(report), "" if ok else CLEAR_HINT)
