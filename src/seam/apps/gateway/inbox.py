"""Inbound updates the gateway could not handle at once, kept durably until they are.

An update whose handling fails (a bug, a store that refused it) must neither be lost nor
jam the platform: before this, the adapter did not acknowledge it, the platform sent it
again, forever, and every other chat waited behind it. Now the gateway acknowledges it
and parks it here; it is tried `ATTEMPTS` times in all (at once, then after each of
`DELAYS`), then recorded as dead. Dead updates stay in the store (they survive a
restart) until `seam gateway clear`; `seam gateway status` and `seam doctor` list them.

A chat's updates keep their order: while one of its updates waits for a retry, the
chat's later updates are parked behind it (and handled once it is settled, answered or
dead); other chats never wait.

A stranger's message that asked for pairing is parked too (`WAIT_PREFIX`), and run once
the owner approves them (`seam pairing approve`), so their first message gets its answer
(before any later one of theirs: `Retries.run_waiting`).

The rows are outbox rows (every store keeps an outbox, with keys, leases, attempts and a
dead state), under targets no deliverer claims: `gateway-in:<chat>/` for retries,
`gateway-wait:<chat>/` for pairing. The `/` ends the chat, so one chat's prefix never
matches another's (`telegram:42/` is not `telegram:420/`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from seam.contracts.chat import Attachment, ChatRef, InboundMessage
from seam.contracts.outbox import Outbox, OutboxItem, OutboxQuery, Outgoing

RETRY_PREFIX = "gateway-in:"
WAIT_PREFIX = "gateway-wait:"
# Tries in all, and the seconds before the second and the third.
ATTEMPTS = 3
DELAYS = (1.0, 4.0)
# A retry still waiting after this long is stuck (no gateway runs its platform).
STUCK_AFTER = 120.0
# A pairing request is valid for an hour; its waiting message is dropped after that.
WAIT_FOR_PAIRING = 3600.0
LOST = "[The files sent with this message were lost; ask for them again]"
# Seconds a claimed row is out of others' reach (handling one takes well under that).
LEASE = 30.0
SCAN_LIMIT = 500


def retry_target(chat: ChatRef) -> str:
    return f"{RETRY_PREFIX}{chat}/"


def wait_target(chat: ChatRef) -> str:
    return f"{WAIT_PREFIX}{chat}/"


def chat_of(target: str) -> str:
    """`"telegram:42"` from `"gateway-in:telegram:42/"`."""
    return target.split(":", 1)[1].rstrip("/")


def encode(msg: InboundMessage, *, tried: int, error: str = "") -> str:
    """The message as the row keeps it: its attachments as what they are (their
    downloads are kept beside the row, `kept_files.py`)."""
    body: dict[str, Any] = {
        "chat": [msg.chat.platform, msg.chat.chat_id, msg.chat.thread_id],
        "message_id": msg.message_id,
        "user_id": msg.user_id,
        "user_name": msg.user_name,
        "text": msg.text,
        "is_group": msg.is_group,
        "addressed": msg.addressed,
        "received_at": msg.received_at,
        "attachments": [[a.kind, a.name, a.mime_type, a.size] for a in msg.attachments],
        "tried": tried,
        "error": error,
    }
    return json.dumps(body)


def decode(payload: str) -> tuple[InboundMessage, int]:
    """The parked message and how many tries it had before it was parked (its
    attachments without their downloads: `KeptFiles.restore` gives those back)."""
    body = json.loads(payload)
    platform, chat_id, thread = body["chat"]
    text = str(body["text"])
    kept = body.get("attachments") or []
    if isinstance(kept, int):  # a row parked before attachments were kept
        text, kept = f"{text}\n\n{LOST}", []
    attachments = tuple(Attachment(kind, name, mime, size) for kind, name, mime, size in kept)
    msg = InboundMessage(
        ChatRef(str(platform), str(chat_id), thread),
        str(body["message_id"]),
        str(body["user_id"]),
        str(body["user_name"]),
        text.strip(),
        is_group=bool(body["is_group"]),
        addressed=bool(body["addressed"]),
        received_at=float(body.get("received_at") or 0.0),
        attachments=attachments,
    )
    return msg, int(body.get("tried", 0))


def one_line(exc: BaseException) -> str:
    """What the chat and the status are told of a failure: one short line."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    line = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return line if len(line) <= 160 else line[:157] + "…"


def retry_after(tries: int) -> float | None:
    """Seconds before the next try after `tries` failed ones; None: no more (dead)."""
    if tries >= ATTEMPTS:
        return None
    return DELAYS[min(tries, len(DELAYS)) - 1]


@dataclass(frozen=True)
class InboundReport:
    """What `seam gateway status` and `seam doctor` show: dead and stuck updates."""

    dead: Sequence[OutboxItem]
    stuck: Sequence[OutboxItem]
    retrying: Sequence[OutboxItem]


class Inbox:
    """The parked updates in `outbox` (see the module docstring)."""

    def __init__(self, outbox: Outbox, clock: Callable[[], float] = time.time) -> None:
        self.outbox = outbox
        self._clock = clock

    async def park(self, sid: str, msg: InboundMessage, *, tried: int, error: str = "") -> None:
        """Keep `msg` for a retry: after its first delay when it failed once (`tried`
        1), at once when it only waits behind an earlier one of its chat (`tried` 0)."""
        wait = retry_after(tried) if tried else 0.0
        due = self._clock() + (wait or 0.0)
        body = encode(msg, tried=tried, error=error)
        await self.outbox.enqueue(
            f"{sid}:inbound", Outgoing(retry_target(msg.chat), body, source=sid, not_before=due)
        )

    async def park_for_pairing(self, sid: str, msg: InboundMessage) -> bool:
        """Keep a stranger's message until they are paired: the chat's first only (later
        ones get the code again); whether this one was kept."""
        query = OutboxQuery(target_prefix=wait_target(msg.chat), status="pending", limit=1)
        if await self.outbox.outbox_items(query):
            return False
        body = encode(msg, tried=0)
        await self.outbox.enqueue(
            f"{sid}:waiting", Outgoing(wait_target(msg.chat), body, source=sid)
        )
        return True

    async def waiting(self, chat: ChatRef) -> bool:
        """Whether an earlier update of `chat` waits for a retry (so this one queues)."""
        query = OutboxQuery(target_prefix=retry_target(chat), status="pending", limit=1)
        return bool(await self.outbox.outbox_items(query))

    async def waiting_for_pairing(self, chat: ChatRef) -> InboundMessage | None:
        """The stranger's message of `chat` that waits for their pairing, if one does."""
        query = OutboxQuery(target_prefix=wait_target(chat), status="pending", limit=1)
        items = await self.outbox.outbox_items(query)
        return decode(items[0].payload)[0] if items else None

    async def heads(self, prefix: str) -> list[OutboxItem]:
        """The oldest pending row of each chat under `prefix` (one chat's rows are
        handled in order, the chats' independently)."""
        query = OutboxQuery(target_prefix=prefix, status="pending", limit=SCAN_LIMIT)
        first: dict[str, OutboxItem] = {}
        for item in await self.outbox.outbox_items(query):
            first.setdefault(item.target, item)
        return list(first.values())

    async def claim(self, target: str, owner: str) -> OutboxItem | None:
        claimed = await self.outbox.claim_due(target, owner, lease=LEASE, limit=1)
        return claimed[0] if claimed else None

    async def report(self, platform: str | None = None) -> InboundReport:
        """Dead updates, and retries waiting longer than `STUCK_AFTER` (of `platform`,
        or of every platform)."""
        prefix = RETRY_PREFIX + (f"{platform}:" if platform else "")
        dead = await self.outbox.outbox_items(
            OutboxQuery(target_prefix=prefix, status="failed", limit=SCAN_LIMIT)
        )
        pending = await self.outbox.outbox_items(
            OutboxQuery(target_prefix=prefix, status="pending", limit=SCAN_LIMIT)
        )
        since = self._clock() - STUCK_AFTER
        stuck = [item for item in pending if item.created_at < since]
        return InboundReport(dead, stuck, pending)

    async def clear(self) -> int:
        """Dismiss every dead update (`seam gateway clear`); how many."""
        report = await self.report()
        for item in report.dead:
            await self.outbox.mark_sent(item.key, delivered_id="cleared")
        return len(report.dead)


__all__ = [
    "ATTEMPTS",
    "DELAYS",
    "RETRY_PREFIX",
    "STUCK_AFTER",
    "WAIT_PREFIX",
    "InboundReport",
    "Inbox",
    "chat_of",
    "decode",
    "encode",
    "one_line",
    "retry_after",
    "retry_target",
    "wait_target",
]
