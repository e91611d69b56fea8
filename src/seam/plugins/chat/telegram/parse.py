"""Telegram's updates to Seam's inbound events (python-telegram-bot's types in, an
`InboundMessage` or `ButtonPress` out), apart from the adapter's connection handling.

- A chat is a chat id, a forum topic its thread; replies go to the same topic.
- `addressed`: a private chat, an @mention of the bot, a reply to one of its messages, or
  a command that names it (or no bot at all). The bot's @name is taken off the front and
  off commands.
- The bot's own messages, a channel speaking in a group, and service messages (a join, a
  topic opened) are not messages to answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from telegram import CallbackQuery, Message, MessageEntity, User

from seam.contracts.chat import (
    Attachment,
    AttachmentKind,
    ButtonPress,
    ChatRef,
    InboundMessage,
)

PLATFORM = "telegram"
Fetcher = Callable[[str], Callable[[], Awaitable[bytes]]]


def inbound_message(
    message: Message, me: User | None, *, received_at: float, fetcher: Fetcher
) -> InboundMessage | None:
    """`message` as an `InboundMessage`, or None when it is not one to answer; `me` is the
    bot (None before it is known), `fetcher` makes an attachment's download from its id."""
    user = message.from_user
    if user is None or (me is not None and user.id == me.id):
        return None  # a channel's voice in a group, or our own message
    text = message.text or message.caption or ""
    entities = message.entities or message.caption_entities or ()
    is_group = message.chat.type in ("group", "supergroup")
    addressed, text = addressing(message, me, text, entities)
    files = attachments(message, fetcher)
    if not text and not files:
        return None  # a service message: someone joined, a topic was opened, ...
    return InboundMessage(
        chat=chat_ref(message),
        message_id=str(message.message_id),
        user_id=str(user.id),
        user_name=user.username or user.full_name,
        text=text,
        is_group=is_group,
        addressed=not is_group or addressed,
        attachments=files,
        received_at=received_at,
    )


def addressing(
    message: Message, me: User | None, text: str, entities: Sequence[MessageEntity]
) -> tuple[bool, str]:
    """Whether a group message is meant for the bot (an @mention, a reply to one of its
    messages, a command that names it or no bot at all), and the text with the bot's
    @name taken off commands and off the front."""
    name = f"@{me.username}".lower() if me is not None and me.username else None
    replied = message.reply_to_message
    addressed = (
        me is not None
        and replied is not None
        and replied.from_user is not None
        and replied.from_user.id == me.id
    )
    for entity in entities:
        piece = entity_text(text, entity)
        if entity.type == MessageEntity.MENTION and name and piece.lower() == name:
            addressed = True
        elif entity.type == MessageEntity.TEXT_MENTION and me and entity.user:
            addressed = addressed or entity.user.id == me.id
        elif entity.type == MessageEntity.BOT_COMMAND and entity.offset == 0:
            command, _, target = piece.partition("@")
            if not target or (name and f"@{target}".lower() == name):
                addressed = True
                text = command + text[len(piece) :] if target else text
    if name and text.lower().startswith(name):
        text = text[len(name) :].lstrip(" ,:")
    return addressed, text


def attachments(message: Message, fetcher: Fetcher) -> tuple[Attachment, ...]:
    """The message's files (the largest size of a photo), each fetched on demand."""
    found: list[tuple[AttachmentKind, str, str | None, Any]] = []
    if (d := message.document) is not None:
        found.append(("document", d.file_name or f"document_{d.file_unique_id}", d.mime_type, d))
    if message.photo:
        p = max(message.photo, key=lambda s: s.width * s.height)
        found.append(("image", f"photo_{p.file_unique_id}.jpg", "image/jpeg", p))
    if (v := message.voice) is not None:
        found.append(("voice", "voice.ogg", v.mime_type or "audio/ogg", v))
    if (a := message.audio) is not None:
        found.append(("audio", a.file_name or f"{a.title or 'audio'}.mp3", a.mime_type, a))
    if (m := message.video) is not None:
        found.append(("video", m.file_name or "video.mp4", m.mime_type, m))
    if (n := message.video_note) is not None:
        found.append(("video", "video_note.mp4", "video/mp4", n))
    if (s := message.sticker) is not None:
        found.append(("other", "sticker.webp", "image/webp", s))
    return tuple(
        Attachment(kind, name, mime, file.file_size, fetcher(file.file_id))
        for kind, name, mime, file in found
    )


def button_press(query: CallbackQuery, long_data: Mapping[str, str]) -> ButtonPress | None:
    """A press of one of our inline buttons; `long_data` maps a short id back to the data
    too long for Telegram's 64 bytes."""
    message = query.message
    if message is None:
        return None  # a button on an inline-mode message: not ours
    raw = query.data or ""
    return ButtonPress(
        chat=chat_ref(message),
        message_id=str(message.message_id),
        user_id=str(query.from_user.id),
        data=long_data.get(raw, raw),
        press_id=query.id,
    )


def chat_ref(message: Any) -> ChatRef:
    thread = getattr(message, "message_thread_id", None)
    topic = getattr(message, "is_topic_message", False)
    return ChatRef(PLATFORM, str(message.chat.id), str(thread) if topic and thread else None)


def entity_text(text: str, entity: MessageEntity) -> str:
    """An entity's text: Telegram counts offsets in UTF-16 code units. An entity whose
    edge falls inside a surrogate pair reads that half as U+FFFD: raising here dropped
    the whole message (found by the fuzz suite)."""
    encoded = text.encode("utf-16-le")
    piece = encoded[entity.offset * 2 : (entity.offset + entity.length) * 2]
    return piece.decode("utf-16-le", "replace")
