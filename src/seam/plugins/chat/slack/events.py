"""Slack payloads to Seam's inbound events, and Seam's buttons to Block Kit: plain data
in, plain data out, so the rules are tested without a socket.

- A message's chat is its channel; its thread is `thread_ts` when it is a reply in a
  thread (a top-level message has none, even though Slack threads under its `ts`).
- `addressed`: a DM, a mention of the bot (`<@U…>`), or a reply in a thread the bot is
  in (it posted there, or Slack says the thread's parent is the bot's).
- Edits, deletions, joins and other bots' posts are not messages to answer.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any

from seam.contracts.chat import Attachment, ButtonPress, ChatRef, InboundMessage, Keyboard
from seam.plugins.chat.common import kind_of

PLATFORM = "slack"
# Subtypes that carry a person's new message; every other subtype is an edit, a deletion,
# a join, a bot's post, ... and is acknowledged without being delivered.
ANSWERABLE_SUBTYPES = frozenset({None, "file_share", "thread_broadcast"})
SECTION_MAX = 3000  # Block Kit's limit for a section's text
BUTTON_LABEL_MAX = 75
BUTTON_VALUE_MAX = 2000
ACTION_PREFIX = "seam:"

Fetcher = Callable[[str], Callable[[], Awaitable[bytes]]]


def is_answerable(event: Mapping[str, Any]) -> bool:
    return (
        event.get("subtype") in ANSWERABLE_SUBTYPES
        and not event.get("bot_id")
        and bool(event.get("user"))
        and bool(event.get("channel"))
    )


def chat_of(event: Mapping[str, Any]) -> ChatRef:
    ts, thread_ts = event.get("ts"), event.get("thread_ts")
    thread = thread_ts if thread_ts and thread_ts != ts else None
    return ChatRef(PLATFORM, str(event["channel"]), thread)


def inbound_message(
    event: Mapping[str, Any],
    *,
    bot_user_id: str | None,
    bot_threads: Collection[tuple[str, str]],
    received_at: float,
    fetcher: Fetcher | None = None,
    user_name: str | None = None,
) -> InboundMessage:
    chat = chat_of(event)
    text = str(event.get("text") or "")
    direct = event.get("channel_type") == "im"
    mention = f"<@{bot_user_id}>" if bot_user_id else None
    mentioned = mention is not None and mention in text
    in_bot_thread = chat.thread_id is not None and (
        (chat.chat_id, chat.thread_id) in bot_threads
        or (bot_user_id is not None and event.get("parent_user_id") == bot_user_id)
    )
    if mention is not None:
        text = re.sub(rf"\s*{re.escape(mention)}\s*", " ", text).strip()
    return InboundMessage(
        chat=chat,
        message_id=str(event["ts"]),
        user_id=str(event["user"]),
        user_name=user_name or str(event["user"]),
        text=text,
        is_group=not direct,
        addressed=direct or mentioned or in_bot_thread or event.get("type") == "app_mention",
        attachments=tuple(_attachments(event.get("files") or (), fetcher)),
        received_at=received_at,
    )


def _attachments(files: Sequence[Mapping[str, Any]], fetcher: Fetcher | None) -> list[Attachment]:
    out = []
    for f in files:
        mime = f.get("mimetype")
        url = f.get("url_private_download") or f.get("url_private")
        out.append(
            Attachment(
                # A clip recorded in Slack is a file of subtype slack_audio: a voice message.
                kind="voice"
                if f.get("subtype") == "slack_audio"
                else kind_of(mime, unknown="other"),
                name=str(f.get("name") or f.get("title") or f.get("id") or "file"),
                mime_type=mime,
                size=f.get("size"),
                fetch=fetcher(str(url)) if fetcher is not None and url else None,
            )
        )
    return out


def slash_command(body: Mapping[str, Any], *, received_at: float) -> InboundMessage:
    """A slash command (`/new`, `/stop`, ...: Slack keeps text that starts with `/` from the
    chat, so the app registers them) as the message it stands for. Its `trigger_id` is the
    message id: unique per use, the same when Slack sends the envelope again."""
    channel = str(body["channel_id"])
    direct = body.get("channel_name") == "directmessage" or channel.startswith("D")
    text = f"{body.get('command', '')} {body.get('text') or ''}".strip()
    return InboundMessage(
        chat=ChatRef(PLATFORM, channel),
        message_id=str(body["trigger_id"]),
        user_id=str(body["user_id"]),
        user_name=str(body.get("user_name") or body["user_id"]),
        text=text,
        is_group=not direct,
        addressed=True,
        received_at=received_at,
    )


def button_press(body: Mapping[str, Any]) -> ButtonPress | None:
    """The first button action of a `block_actions` payload (None for other elements)."""
    actions = body.get("actions") or []
    action = next((a for a in actions if a.get("type") == "button"), None)
    if action is None:
        return None
    container = body.get("container") or {}
    message = body.get("message") or {}
    channel = container.get("channel_id") or (body.get("channel") or {}).get("id")
    message_ts = container.get("message_ts") or message.get("ts")
    thread = container.get("thread_ts") or message.get("thread_ts")
    return ButtonPress(
        chat=ChatRef(PLATFORM, str(channel), thread if thread and thread != message_ts else None),
        message_id=str(message_ts),
        user_id=str((body.get("user") or {}).get("id")),
        data=str(action.get("value") or ""),
        press_id=str(body.get("trigger_id") or action.get("action_ts")),
    )


def blocks_for(text: str, buttons: Keyboard) -> list[dict[str, Any]]:
    """Sections holding `text` (at most 3,000 characters each, cut at line ends where it
    can be), then one actions block per row of buttons."""
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": piece}} for piece in _sections(text)
    ]
    for r, row in enumerate(buttons):
        elements = [
            {
                "type": "button",
                "text": {"type": "plain_text", "text": b.label[:BUTTON_LABEL_MAX], "emoji": True},
                "value": b.data[:BUTTON_VALUE_MAX],
                "action_id": f"{ACTION_PREFIX}{r}:{c}",
            }
            for c, b in enumerate(row)
        ]
        if elements:
            blocks.append(
                {"type": "actions", "block_id": f"seam-actions-{r}", "elements": elements}
            )
    return blocks


def _sections(text: str) -> list[str]:
    pieces: list[str] = []
    while len(text) > SECTION_MAX:
        cut = text.rfind("\n", 0, SECTION_MAX)
        cut = cut if cut > 0 else SECTION_MAX
        pieces.append(text[:cut])
        text = text[cut:].lstrip("\n")
    if text.strip():
        pieces.append(text)
    return pieces
