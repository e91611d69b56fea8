"""What `seam gateway` is built from: the chat adapters `[gateway]` configures, the lock
that lets one process hold each adapter, the sender that delivers outbox items through an
adapter, and the status file `seam doctor` reads.

Adapters are built by the registered platforms' `ChatPlatform`s (`wiring/chat_platforms.py`),
whose builders import their SDK only when that platform is configured, so a gateway for
Telegram never imports Slack's or Discord's SDK, and the runtime never imports any of them.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seam.contracts.chat import AdapterBuilder, Button, ChatAdapter, ChatRef
from seam.contracts.outbox import Outbox, OutboxItem
from seam.contracts.store_backend import ProcessLock
from seam.plugins.delivery.senders import DeliveryFailed
from seam.services.sessions.postgres_lock import PostgresLock, advisory_key
from seam.wiring.chat_platforms import chat_platforms
from seam.wiring.gateway_settings import GatewaySection, gateway_section
from seam.wiring.settings import ConfigError, Settings
from seam.wiring.store_backends import backend_for, store_location

log = logging.getLogger("seam.gateway")

STATUS_FILE = "gateway-status.json"
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


# Sending outbox items through an adapter


class AdapterSlot:
    """The adapter a platform runs now (the watchdog replaces it when it rebuilds)."""

    def __init__(self, adapter: ChatAdapter | None = None) -> None:
        self.adapter = adapter


class ChatSender:
    """Delivers `"<platform>:<chat>[:<thread>]"` outbox items through the adapter in `slot`.

    The gateway's own items are one platform message each, already formatted: payload
    `{"text", "edit", "buttons"}`; `edit` names a message to replace (the streamed
    preview), and when that edit fails the text is sent as a new message. Items other
    producers enqueue (cron output, alerts: `{"text", ...}` without `edit`) are Markdown,
    formatted and split here, and sent part after part."""

    def __init__(self, platform: str, slot: AdapterSlot) -> None:
        self.prefix = f"{platform}:"
        self.slot = slot

    async def send(self, item: OutboxItem) -> str | None:
        adapter = self.slot.adapter
        if adapter is None:
            raise DeliveryFailed("the adapter is not running", retry_after=5.0)
        try:
            body = json.loads(item.payload)
            chat = parse_target(item.target)
            text = str(body["text"])
        except (ValueError, KeyError, TypeError) as exc:
            raise DeliveryFailed(f"not a chat message: {exc}", permanent=True) from None
        try:
            if "edit" not in body:
                ids = [await adapter.send(chat, part) for part in adapter.format(text)]
                return ids[0] if ids else None
            buttons = _buttons(body.get("buttons") or [])
            edit = body.get("edit")
            if edit:
                try:
                    await adapter.edit(chat, str(edit), text, buttons=buttons)
                    return str(edit)
                except Exception as exc:  # the preview was deleted, or is too old to edit
                    log.info("editing %s in %s failed (%s): sending instead", edit, chat, exc)
            return await adapter.send(chat, text, buttons=buttons)
        except DeliveryFailed:
            raise
        except Exception as exc:
            retry_after = getattr(exc, "retry_after", None)
            raise DeliveryFailed(
                str(exc) or type(exc).__name__,
                retry_after=float(retry_after) if isinstance(retry_after, int | float) else None,
            ) from None


def parse_target(target: str) -> ChatRef:
    platform, _, rest = target.partition(":")
    chat, _, thread = rest.partition(":")
    if not platform or not chat:
        raise ValueError(f"not a chat target: {target!r}")
    return ChatRef(platform, chat, thread or None)


def _buttons(rows: Sequence[Any]) -> list[list[Button]]:
    return [[Button(str(b["label"]), str(b["data"])) for b in row] for row in rows]


# Delivering what the outbox holds for a platform

# Seconds a claimed chat message is held (a send is cut off at half of it): a gateway
# killed mid-send has the message sent again by the next one this long after.
DELIVERY_LEASE = 20.0


async def deliver_forever(outbox: Outbox, sender: ChatSender, owner: str) -> None:
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


class FileLock:
    """`flock` on `$SEAM_HOME/gateway-<name>.lock`: gateways sharing a home on one
    machine (the SQLite store) take turns; the kernel frees it when the holder dies."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    async def acquire(self) -> bool:
        if self._fd is not None:
            return True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return True

    async def held(self) -> bool:
        return self._fd is not None

    async def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def adapter_lock(settings: Settings, name: str) -> AdapterLock:
    """The lock for adapter `name`: the store backend's own (PostgreSQL: an advisory lock,
    so gateways on several machines take turns), else a file lock under $SEAM_HOME."""
    where = store_location(settings)
    backend = backend_for(where.url)
    if backend.lock is not None:
        return backend.lock(where, name)
    return FileLock(settings.home / f"gateway-{name}.lock")


# The status file


def status_path(settings: Settings) -> Path:
    return settings.home / STATUS_FILE


def write_status(path: Path, adapters: Mapping[str, Mapping[str, Any]]) -> None:
    """Merge this process's view of `adapters` into the status file (other processes
    write the adapters they hold), atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock_fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        current = read_status(path)
        merged = dict(current.get("adapters", {}))
        for name, entry in adapters.items():
            old = merged.get(name)
            # A standby's view never hides a holder's fresh one.
            if (
                entry.get("state") == "standby"
                and old is not None
                and old.get("state") != "standby"
                and old.get("updated_at", 0) > time.time() - 30
                and old.get("pid") != os.getpid()
            ):
                continue
            merged[name] = dict(entry)
        tmp = path.with_suffix(".tmp")
        body = json.dumps({"updated_at": time.time(), "adapters": merged}, indent=2)
        tmp.write_text(body + "\n", encoding="utf-8")
        tmp.replace(path)
    finally:
        os.close(lock_fd)


def read_status(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def owner_target(settings: Settings) -> str:
    return gateway_section(settings).owner


__all__ = [
    "AdapterLock",
    "AdapterSlot",
    "AdapterSpec",
    "ChatSender",
    "DeliveryFailed",
    "FileLock",
    "GatewaySection",
    "PostgresLock",
    "adapter_lock",
    "adapter_specs",
    "advisory_key",
    "deliver_forever",
    "gateway_section",
    "parse_target",
    "read_status",
    "status_path",
    "write_status",
]
