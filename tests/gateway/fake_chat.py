"""An in-memory chat platform and a ChatAdapter for it, behaving like the real ones where
the gateway depends on it: updates carry increasing ids and are acknowledged only after
`deliver` returned (an offset, as Telegram's), so an update whose delivery failed or was
cut off by a "crash" is delivered again to the next adapter; sent and edited messages are
kept for the test to read, as a person in the chat would see them.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from seam.contracts.chat import (
    AdapterHealth,
    Attachment,
    Button,
    ButtonPress,
    ChatLimits,
    ChatRef,
    Inbound,
    InboundMessage,
)

PLATFORM = "telegram"


@dataclass
class Shown:
    """A message as the chat shows it now."""

    chat: str
    id: str
    text: str
    buttons: list[list[Button]] = field(default_factory=list)
    edits: int = 0
    edited_at: list[float] = field(default_factory=list)  # monotonic times of the edits


class FakePlatform:
    """The platform's side: the update queue with its offset, and what the chat shows."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._message_ids = itertools.count(1000)
        self.updates: list[tuple[int, Inbound]] = []
        self.offset = 0  # updates with id < offset are acknowledged
        self.messages: dict[str, Shown] = {}
        self.order: list[str] = []  # message ids in the order they were sent
        self.answers: list[tuple[str, str | None]] = []  # (press id, text)
        self.typing = 0
        self.fail_sends = False
        self.changed = asyncio.Event()
        self.delivered: list[int] = []  # update ids, each time they were delivered

    def push(self, event: Inbound) -> int:
        update_id = next(self._ids)
        self.updates.append((update_id, event))
        self.changed.set()
        return update_id

    def say(
        self,
        text: str,
        *,
        user: str = "42",
        chat: str | None = None,
        group: bool = False,
        addressed: bool = True,
        attachments: Sequence[Attachment] = (),
        thread: str | None = None,
    ) -> InboundMessage:
        msg = InboundMessage(
            chat=ChatRef(PLATFORM, chat or user, thread),
            message_id=str(next(self._message_ids)),
            user_id=user,
            user_name=f"user{user}",
            text=text,
            is_group=group,
            addressed=addressed,
            attachments=tuple(attachments),
            received_at=time.time(),
        )
        self.push(msg)
        return msg

    def press(self, message_id: str, data: str, *, user: str = "42", chat: str = "42") -> None:
        self.push(ButtonPress(ChatRef(PLATFORM, chat), message_id, user, data, f"p{user}"))

    def sent_texts(self, chat: str | None = None) -> list[str]:
        return [
            self.messages[i].text
            for i in self.order
            if chat is None or self.messages[i].chat.split(":")[0] == chat
        ]

    def pending(self) -> list[tuple[int, Inbound]]:
        return [(uid, ev) for uid, ev in self.updates if uid >= self.offset]


class FakeAdapter:
    platform = PLATFORM

    def __init__(
        self,
        platform: FakePlatform,
        *,
        limits: ChatLimits | None = None,
        stall: bool = False,
    ) -> None:
        self.side = platform
        self.limits = limits or ChatLimits(max_text=400, min_edit_interval=0.0)
        self._stall = stall
        self._state = "starting"
        self._last: float | None = None
        self._since = time.time()
        self.closed = False

    async def run(self, deliver: Callable[[Inbound], Awaitable[None]]) -> None:
        self._state, self._since = "connected", time.time()
        if not self._stall:
            self._last = time.time()  # connecting is progress
        while not self.closed:
            if self._stall:  # an open connection that never brings anything again
                await asyncio.Event().wait()
            self._last = time.time()
            pending = self.side.pending()
            if not pending:
                self.side.changed.clear()
                try:
                    async with asyncio.timeout(0.2):
                        await self.side.changed.wait()
                except TimeoutError:
                    pass
                continue
            update_id, event = pending[0]
            self.side.delivered.append(update_id)
            try:
                await deliver(event)
            except Exception:
                # Not acknowledged: the platform gives it again.
                await asyncio.sleep(0.05)
                continue
            self.side.offset = update_id + 1

    async def send(
        self, chat: ChatRef, text: str, *, buttons: Sequence[Sequence[Button]] = ()
    ) -> str:
        if self.side.fail_sends:
            raise ConnectionError("the platform is unreachable")
        mid = f"m{len(self.side.order) + 1}"
        self.side.messages[mid] = Shown(str(chat), mid, text, [list(r) for r in buttons])
        self.side.order.append(mid)
        self.side.changed.set()
        return mid

    async def edit(
        self,
        chat: ChatRef,
        message_id: str,
        text: str,
        *,
        buttons: Sequence[Sequence[Button]] = (),
    ) -> None:
        if self.side.fail_sends:
            raise ConnectionError("the platform is unreachable")
        shown = self.side.messages[message_id]
        shown.text, shown.buttons = text, [list(r) for r in buttons]
        shown.edits += 1
        shown.edited_at.append(time.monotonic())
        self.side.changed.set()

    async def typing(self, chat: ChatRef) -> None:
        self.side.typing += 1

    async def answer_press(self, press: ButtonPress, text: str | None = None) -> None:
        self.side.answers.append((press.press_id, text))
        self.side.changed.set()

    def format(self, markdown: str) -> list[str]:
        limit = self.limits.max_text
        return [markdown[i : i + limit] for i in range(0, len(markdown), limit)] or [""]

    def health(self) -> AdapterHealth:
        return AdapterHealth(self._state, self._last, None, self._since)

    async def close(self) -> None:
        self.closed = True
        self._state = "stopped"
