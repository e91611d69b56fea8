"""Sending outbox items through a chat adapter: the gateway's own replies (one platform
message each, already formatted, perhaps replacing the streamed preview) and what other
producers enqueue for a chat (cron output, alerts: Markdown, formatted and split here)."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from seam.contracts.chat import Button, ChatAdapter, ChatRef
from seam.contracts.outbox import OutboxItem
from seam.wiring.gateway import DeliveryFailed

log = logging.getLogger("seam.gateway")


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
            return await _reply(adapter, chat, text, body)
        except DeliveryFailed:
            raise
        except Exception as exc:
            retry_after = getattr(exc, "retry_after", None)
            raise DeliveryFailed(
                str(exc) or type(exc).__name__,
                retry_after=float(retry_after) if isinstance(retry_after, int | float) else None,
            ) from None


async def _reply(adapter: ChatAdapter, chat: ChatRef, text: str, body: dict[str, Any]) -> str:
    """The gateway's own message: replaces the preview `edit` names, else is sent new."""
    buttons = _buttons(body.get("buttons") or [])
    edit = body.get("edit")
    if edit:
        try:
            await adapter.edit(chat, str(edit), text, buttons=buttons)
            return str(edit)
        except Exception as exc:  # the preview was deleted, or is too old to edit
            log.info("editing %s in %s failed (%s): sending instead", edit, chat, exc)
    return await adapter.send(chat, text, buttons=buttons)


def parse_target(target: str) -> ChatRef:
    platform, _, rest = target.partition(":")
    chat, _, thread = rest.partition(":")
    if not platform or not chat:
        raise ValueError(f"not a chat target: {target!r}")
    return ChatRef(platform, chat, thread or None)


def _buttons(rows: Sequence[Any]) -> list[list[Button]]:
    return [[Button(str(b["label"]), str(b["data"])) for b in row] for row in rows]
