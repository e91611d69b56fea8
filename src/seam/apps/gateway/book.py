"""The chats a gateway has answered in, and the last message it took from each:
`$SEAM_HOME/gateway-chats.json`.

A platform without redelivery (Discord) reads what was posted while the gateway was down
from each channel's history, after the last message it had taken (`catch_up_from`); after
a restart only this file knows those channels, and whether each is a private chat (where
every message is addressed to the bot) or a group. Written when a chat's last message
changes, atomically, under a lock (gateways on one home share it).
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any

from seam.contracts.chat import ChatRef

CHATS_FILE = "gateway-chats.json"


class ChatBook:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._cache: dict[str, dict[str, Any]] | None = None

    def seen(self, chat: ChatRef, message_id: str, *, is_group: bool) -> None:
        """Record `message_id` as the chat's latest taken message (ids that are numbers
        only move forward)."""
        key = str(chat)
        known = self._load().get(key)
        if known is not None and not _later(message_id, str(known.get("last", ""))):
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock_fd = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
            data = self._read()
            old = data.get(key)
            if old is None or _later(message_id, str(old.get("last", ""))):
                data[key] = {"last": message_id, "group": is_group}
                tmp = self.path.with_suffix(".tmp")
                tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", "utf-8")
                tmp.replace(self.path)
            self._cache = data
        finally:
            os.close(lock_fd)

    def chats(self, platform: str) -> list[tuple[ChatRef, str, bool]]:
        """(chat, last message id, is it a group) for every chat of `platform`."""
        out = []
        for key, entry in self._read().items():
            name, _, rest = key.partition(":")
            if name != platform or not rest:
                continue
            chat, _, thread = rest.partition(":")
            out.append(
                (ChatRef(name, chat, thread or None), str(entry["last"]), bool(entry["group"]))
            )
        return out

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._cache is None:
            self._cache = self._read()
        return self._cache

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}


def _later(new: str, old: str) -> bool:
    if new.isdigit() and old.isdigit():
        return int(new) > int(old)
    return new != old
