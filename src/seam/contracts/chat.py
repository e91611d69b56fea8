"""A chat platform as Seam sees it (Telegram, Slack, Discord, ...): a `ChatAdapter` is a
platform binding a surface (the gateway) hands to the sessions it starts; the runtime
never imports a platform.

Inbound events are fed to a callback that returns only once the event is durable (a
submission in the store); the adapter acknowledges the event to the platform (Telegram's
update offset, Slack's envelope ack) only after that, so a crash in between means the
platform redelivers it, and the derived submission id recognises the repeat.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from seam.contracts.names import clean_name

AttachmentKind = Literal["document", "image", "voice", "audio", "video", "other"]
AdapterState = Literal["starting", "connected", "reconnecting", "down", "stopped"]


@dataclass(frozen=True, slots=True)
class ChatRef:
    """Where a message lives: `str(ref)` is `"<platform>:<chat>[:<thread>]"`, the string
    `session_key_for` and outbox targets use."""

    platform: str
    chat_id: str
    thread_id: str | None = None

    def __str__(self) -> str:
        base = f"{self.platform}:{self.chat_id}"
        return base if self.thread_id is None else f"{base}:{self.thread_id}"


@dataclass(frozen=True, slots=True)
class Attachment:
    kind: AttachmentKind
    name: str
    mime_type: str | None
    size: int | None
    # Downloads the content; only called for kinds Seam can use.
    fetch: Callable[[], Awaitable[bytes]] | None = None


@dataclass(frozen=True, slots=True)
class InboundMessage:
    chat: ChatRef
    message_id: str
    user_id: str
    user_name: str
    text: str
    is_group: bool = False
    # In a group the agent answers only when mentioned or replied to.
    addressed: bool = True
    attachments: Sequence[Attachment] = field(default_factory=tuple)
    received_at: float = 0.0

    def __post_init__(self) -> None:
        # Where a platform's name enters Seam: nothing downstream prints it raw.
        object.__setattr__(self, "user_name", clean_name(self.user_name))


@dataclass(frozen=True, slots=True)
class ButtonPress:
    chat: ChatRef
    message_id: str  # the message the button is on
    user_id: str
    data: str  # the button's data as sent
    press_id: str  # the platform's id for answering the press


Inbound = InboundMessage | ButtonPress


@dataclass(frozen=True, slots=True)
class Button:
    label: str
    data: str


# The buttons under a message: rows top to bottom, each row left to right.
Keyboard = Sequence[Sequence[Button]]


@dataclass(frozen=True, slots=True)
class ChatLimits:
    max_text: int  # characters per message after formatting
    min_edit_interval: float  # seconds between edits of one message
    max_buttons_per_row: int = 5


@dataclass(frozen=True, slots=True)
class AdapterHealth:
    state: AdapterState
    last_received_at: float | None = None  # the last progress of the poll/socket
    last_error: str | None = None
    since: float | None = None  # when `state` began


@runtime_checkable
class ChatAdapter(Protocol):
    platform: str
    limits: ChatLimits

    async def run(self, deliver: Callable[[Inbound], Awaitable[None]]) -> None:
        """Connect and feed every inbound event to `deliver`, acknowledging it to the
        platform only after `deliver` returned; reconnect with back-off forever; return
        when cancelled or `close`d."""
        ...

    async def send(self, chat: ChatRef, text: str, *, buttons: Keyboard = ()) -> str:
        """Post `text` (already in the platform's format, within `limits.max_text`);
        return the platform's message id."""
        ...

    async def edit(
        self, chat: ChatRef, message_id: str, text: str, *, buttons: Keyboard = ()
    ) -> None: ...

    async def typing(self, chat: ChatRef) -> None: ...

    async def answer_press(self, press: ButtonPress, text: str | None = None) -> None: ...

    def format(self, markdown: str) -> list[str]:
        """Markdown converted to the platform's format and split at its limit, code blocks
        kept whole (a block longer than the limit is split and re-fenced)."""
        ...

    def health(self) -> AdapterHealth: ...

    async def close(self) -> None: ...


# (the `[gateway.<name>]` section, the environment, the clock) -> a ready adapter
AdapterBuilder = Callable[[Any, Mapping[str, str], Callable[[], float]], ChatAdapter]


@dataclass(frozen=True, slots=True)
class ChatPlatform:
    """Everything the gateway's wiring needs to know of a chat platform, so adding one is
    its module (which exports one of these) plus one line in `wiring/chat_platforms.py`.

    - `name`: the `[gateway.<name>]` table, `ChatRef.platform`, and the delivery targets
      `<name>:<chat>[:<thread>]` the gateway's sender takes;
    - `id_prefix`: the submission ids of its messages, `<id_prefix>:<chat>:<message>`
      (public: a redelivered message is recognised by it);
    - `section`: the pydantic model that validates `[gateway.<name>]`; it has an
      `allow: list[str]` (user ids that need no pairing);
    - `build`: makes the adapter from the validated section, the environment and the clock
      (importing the platform's SDK only then);
    - `token_fields`: the section's fields that name environment variables which must be
      set (checked before the gateway starts, and by `seam doctor`).
    """

    name: str
    id_prefix: str
    section: type[Any]
    build: AdapterBuilder
    token_fields: tuple[str, ...] = ()
