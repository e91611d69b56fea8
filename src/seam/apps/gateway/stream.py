"""A turn as the chat sees it while it runs: a typing indicator, and the answer growing in
one message edited as text arrives (no more often than the platform allows).

The streamed message is a preview: the final answer replaces it through the outbox (its
first part edits this message), so a crash mid-stream costs at most a stale preview,
never the answer. Failures to show the preview (rate limits, a dropped connection) are
logged and skipped: they must never fail the turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from seam.contracts.chat import ChatAdapter, ChatRef
from seam.contracts.events import AgentEvent, TextDelta, ToolApprovalRequired, ToolStart

log = logging.getLogger("seam.gateway")

# Seconds between typing indicators (Telegram shows one for about 5 s).
TYPING_EVERY = 4.0
# A preview never shows more than this much of the answer (the rest comes at the end).
PREVIEW_CHARS = 3000


class TurnView:
    """Follows one submission's events (`on_event`) and shows them in `chat`."""

    def __init__(
        self,
        adapter: ChatAdapter,
        chat: ChatRef,
        *,
        on_approval: Callable[[ToolApprovalRequired], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.adapter = adapter
        self.chat = chat
        self.message_id: str | None = None
        self._on_approval = on_approval
        self._clock = clock
        self._text = ""
        self._shown = ""
        self._last_edit = float("-inf")
        self._flusher: asyncio.Task[None] | None = None
        self._typing: asyncio.Task[None] | None = None
        self._closed = False
        self._sending = False

    @property
    def said(self) -> str:
        """The text streamed so far (what the preview shows)."""
        return self._text.strip()

    def start(self) -> None:
        if self._typing is None:
            self._typing = asyncio.ensure_future(self._keep_typing())

    def on_event(self, event: AgentEvent) -> None:
        if self._closed:
            return
        if isinstance(event, TextDelta):
            self._text += event.text
            self._schedule()
        elif isinstance(event, ToolStart):
            self._text += f"\n\n⚙ {event.name}…\n\n"
            self._schedule()
        elif isinstance(event, ToolApprovalRequired) and self._on_approval is not None:
            self._on_approval(event)

    async def close(self) -> str | None:
        """Stop typing and previewing; the preview message's id (None: nothing shown)."""
        self._closed = True
        flusher = self._flusher
        if flusher is not None and not flusher.done() and self._sending:
            # A send under way: wait for its id, or the answer would come as a second
            # message beside a stale preview.
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(flusher), timeout=10.0)
        for task in (self._typing, self._flusher):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        return self.message_id

    def _schedule(self) -> None:
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.ensure_future(self._flush())

    async def _flush(self) -> None:
        interval = self.adapter.limits.min_edit_interval
        while not self._closed and self._text.strip() and self._text != self._shown:
            wait = self._last_edit + interval - self._clock()
            if wait > 0:
                await asyncio.sleep(wait)
                continue
            text = self._text
            shown = _preview(self.adapter, text)
            self._last_edit = self._clock()
            self._sending = True
            try:
                if self.message_id is None:
                    self.message_id = await self.adapter.send(self.chat, shown)
                else:
                    await self.adapter.edit(self.chat, self.message_id, shown)
            except Exception as exc:  # a preview is best effort
                log.warning("could not show the answer so far in %s: %s", self.chat, exc)
            finally:
                self._sending = False
            self._shown = text

    async def _keep_typing(self) -> None:
        while True:
            try:
                await self.adapter.typing(self.chat)
            except Exception as exc:
                log.debug("typing indicator failed in %s: %s", self.chat, exc)
            await asyncio.sleep(TYPING_EVERY)


def _preview(adapter: ChatAdapter, text: str) -> str:
    text = text.strip()
    if len(text) > PREVIEW_CHARS:
        text = text[:PREVIEW_CHARS] + " …"
    parts = adapter.format(text + " ▌")
    return parts[0] if parts else "…"
