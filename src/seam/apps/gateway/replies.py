"""Everything the gateway says goes through the outbox, keyed by what it answers.

A message's answer is one outbox item per platform message: `"<submission id>:reply:<n>"`
for the n-th part `adapter.format(markdown)` gives, payload `{"text", "edit", "buttons"}`
(`text` already in the platform's format; `edit`: the streamed message the first part
replaces, or null). Enqueueing is idempotent by key, so answering the same message twice
(a redelivered update, a restart that finds a settled submission) sends it once.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from seam.contracts.chat import Button, ChatAdapter, ChatRef
from seam.contracts.execution import Submission
from seam.contracts.outbox import Outbox, Outgoing

NO_ANSWER = "(no answer)"
STOPPED = "Stopped."


def reply_key(source: str, part: int = 0, kind: str = "reply") -> str:
    return f"{source}:{kind}:{part}"


def answer_text(sub: Submission, *, partial: str = "") -> str:
    """What the chat is told when a submission settles; `partial`: what the turn had
    streamed, kept (and marked stopped) when a stopped turn's own result is empty, so
    `/stop` never replaces what was already said with nothing."""
    if sub.outcome == "completed":
        return (sub.result or "").strip() or NO_ANSWER
    if sub.outcome == "aborted":
        said = (sub.result or "").strip() or partial.strip()
        return f"{said}\n\n_{STOPPED}_" if said else STOPPED
    return f"Sorry, that did not work: {sub.error or 'the turn failed'}"


def payload(text: str, *, edit: str | None = None, buttons: Sequence[Sequence[Button]] = ()) -> str:
    rows = [[{"label": b.label, "data": b.data} for b in row] for row in buttons]
    return json.dumps({"text": text, "edit": edit, "buttons": rows}, ensure_ascii=False)


async def enqueue_reply(
    outbox: Outbox,
    adapter: ChatAdapter,
    chat: ChatRef,
    source: str,
    markdown: str,
    *,
    edit: str | None = None,
    kind: str = "reply",
) -> int:
    """Enqueue `markdown` as the answer to `source`, split as the platform needs; the first
    part edits `edit` when given. Returns how many parts."""
    parts = adapter.format(markdown) or [adapter.format(NO_ANSWER)[0]]
    for n, part in enumerate(parts):
        await outbox.enqueue(
            reply_key(source, n, kind),
            Outgoing(str(chat), payload(part, edit=edit if n == 0 else None), source=source),
        )
    return len(parts)


async def replied(outbox: Outbox, source: str) -> bool:
    return await outbox.outbox_item(reply_key(source)) is not None
