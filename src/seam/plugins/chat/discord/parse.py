"""discord.py objects to Seam's inbound events, and Seam's buttons to message components.

- A guild channel or a DM is a chat; a thread is the thread of its parent channel's chat
  (`discord:<parent>:<thread>`), and replies to it go to the thread (a thread is a channel).
- `addressed`: a DM, a mention of the bot, or a reply to one of the bot's messages.
- Bots (the agent itself included) and system messages (joins, pins, ...) are not
  messages to answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import discord

from seam.contracts.chat import (
    Attachment,
    AttachmentKind,
    ChatRef,
    InboundMessage,
    Keyboard,
)
from seam.plugins.chat.common import kind_of

PLATFORM = "discord"
ANSWERABLE_TYPES = (discord.MessageType.default, discord.MessageType.reply)
CUSTOM_ID_MAX = 100
LABEL_MAX = 80


@dataclass
class ChannelInfo:
    """What the adapter knows of a channel it has heard from: where it sits, and the last
    message it delivered from it (where a catch-up starts)."""

    channel_id: str
    is_dm: bool
    parent_id: str | None = None  # set for a thread
    guild_id: str | None = None
    last_seen: int = 0
    behind: bool = False  # a delivery failed: the history is read again from last_seen
    known: bool = True  # False: named by `catch_up_from`, its kind is asked of Discord
    chat: ChatRef = field(init=False)

    def __post_init__(self) -> None:
        if self.parent_id is not None:
            self.chat = ChatRef(PLATFORM, self.parent_id, self.channel_id)
        else:
            self.chat = ChatRef(PLATFORM, self.channel_id)


def channel_info(channel: Any, guild_id: int | None) -> ChannelInfo:
    channel_id = str(channel.id)
    if isinstance(channel, discord.Thread):
        return ChannelInfo(channel_id, False, str(channel.parent_id), str(guild_id))
    is_dm = guild_id is None and (
        isinstance(channel, discord.DMChannel | discord.GroupChannel)
        or getattr(channel, "type", None) == discord.ChannelType.private
    )
    return ChannelInfo(channel_id, is_dm, None, str(guild_id) if guild_id else None)


def is_answerable(message: discord.Message) -> bool:
    return not message.author.bot and message.type in ANSWERABLE_TYPES


def inbound_message(
    message: discord.Message, info: ChannelInfo, *, bot_id: int | None, received_at: float
) -> InboundMessage:
    text = message.content or ""
    mentioned = False
    if bot_id is not None:
        pattern = re.compile(rf"\s*<@!?{bot_id}>\s*")
        mentioned = bool(pattern.search(text)) or any(u.id == bot_id for u in message.mentions)
        text = pattern.sub(" ", text).strip()
    reference = message.reference
    resolved = reference.resolved if reference is not None else None
    replied_to_bot = (
        isinstance(resolved, discord.Message)
        and bot_id is not None
        and resolved.author.id == bot_id
    )
    author = message.author
    return InboundMessage(
        chat=info.chat,
        message_id=str(message.id),
        user_id=str(author.id),
        user_name=str(getattr(author, "global_name", None) or author.name),
        text=text,
        is_group=not info.is_dm,
        addressed=info.is_dm or mentioned or replied_to_bot,
        attachments=tuple(_attachment(a) for a in message.attachments),
        received_at=received_at,
    )


def _attachment(a: discord.Attachment) -> Attachment:
    return Attachment(
        kind=_kind(a.content_type),
        name=a.filename,
        mime_type=a.content_type,
        size=a.size,
        fetch=a.read,
    )


def _kind(mime: str | None) -> AttachmentKind:
    kind = kind_of(mime, unknown="document")
    # Discord's voice messages are ogg/opus audio attachments.
    return "voice" if kind == "audio" and "ogg" in str(mime) else kind


def components(buttons: Keyboard, custom_id: Any) -> list[dict[str, Any]]:
    """One action row per row of buttons (Discord allows five of each); `custom_id` maps a
    button's data to its custom id (at most 100 characters)."""
    rows = []
    for row in list(buttons)[:5]:
        elements = [
            {"type": 2, "style": 2, "label": b.label[:LABEL_MAX], "custom_id": custom_id(b.data)}
            for b in list(row)[:5]
        ]
        if elements:
            rows.append({"type": 1, "components": elements})
    return rows


def guild_id_of(message: discord.Message) -> int | None:
    """The guild of a message whose `guild` discord.py has not cached (read off its channel)."""
    channel = message.channel
    guild_id = getattr(channel, "guild_id", None)
    return int(guild_id) if guild_id else None
