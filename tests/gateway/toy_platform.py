"""A chat platform from one file: what a new platform's author writes.

`TOY` is its `ChatPlatform` (name, submission-id prefix, `[gateway.toy]` model, builder,
token variable); registering it is one line (`CHAT_PLATFORMS` plus `TOY`). The remote
side is a `ToyRoom` in memory, found by the section's `room` (as a real adapter finds its
server by a URL): a test pushes messages into it and reads what the agent posted.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from seam.contracts.chat import (
    AdapterHealth,
    Button,
    ButtonPress,
    ChatAdapter,
    ChatLimits,
    ChatPlatform,
    ChatRef,
    Inbound,
    InboundMessage,
)
from seam.plugins.chat.section import ChatSection


class ToySection(ChatSection):
    token_env: str = "TOY_TOKEN"
    room: str = "lobby"  # which in-memory room the adapter connects to
    allow: list[str] = Field(default_factory=list)


@dataclass
class ToyRoom:
    """The platform's side: messages waiting to be delivered, and what the agent posted."""

    inbox: asyncio.Queue[InboundMessage] = field(default_factory=asyncio.Queue)
    posted: list[tuple[str, str]] = field(default_factory=list)  # (chat, text)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def say(self, text: str, *, user: str = "7") -> InboundMessage:
        msg = InboundMessage(ChatRef("toy", user), str(next(self.ids)), user, f"u{user}", text)
        self.inbox.put_nowait(msg)
        return msg


ROOMS: dict[str, ToyRoom] = {}


class ToyAdapter:
    platform = "toy"
    limits = ChatLimits(max_text=1000, min_edit_interval=0.0)

    def __init__(self, room: ToyRoom) -> None:
        self.room = room
        self.state: Any = "starting"
        self.last: float | None = None

    async def run(self, deliver: Callable[[Inbound], Awaitable[None]]) -> None:
        self.state, self.last = "connected", time.time()
        while True:
            msg = await self.room.inbox.get()
            await deliver(msg)  # acknowledged (taken off the queue) once durable
            self.last = time.time()

    async def send(
        self, chat: ChatRef, text: str, *, buttons: Sequence[Sequence[Button]] = ()
    ) -> str:
        self.room.posted.append((str(chat), text))
        self.room.changed.set()
        return str(len(self.room.posted))

    async def edit(
        self,
        chat: ChatRef,
        message_id: str,
        text: str,
        *,
        buttons: Sequence[Sequence[Button]] = (),
    ) -> None:
        self.room.posted[int(message_id) - 1] = (str(chat), text)
        self.room.changed.set()

    async def typing(self, chat: ChatRef) -> None:
        return None

    async def answer_press(self, press: ButtonPress, text: str | None = None) -> None:
        return None

    def format(self, markdown: str) -> list[str]:
        return [markdown]

    def health(self) -> AdapterHealth:
        return AdapterHealth(self.state, self.last)

    async def close(self) -> None:
        self.state = "stopped"


def build_toy(section: Any, env: Mapping[str, str], clock: Callable[[], float]) -> ChatAdapter:
    return ToyAdapter(ROOMS.setdefault(section.room, ToyRoom()))


TOY = ChatPlatform(
    name="toy", id_prefix="ty", section=ToySection, build=build_toy, token_fields=("token_env",)
)
