"""The context window inside a turn: build the prompt, load the history, keep it fitting.

A mixin of `Turn` (kept apart so the turn's hot loop stays readable): before every model
request the turn asks `_fit_context`, which estimates the request incrementally (only
messages added since the last estimate are counted), streams a `context_warning` when
usage crosses the warning threshold, and past the compression threshold compacts the
history through the loop's compressor, stores the marker, records the figures and
streams `context_compacted`.

Events raised before `run_start` (which waits for the model's first chunk) are queued
and flushed right after it, so every turn still opens with `run_start`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from seam.contracts.context import CompactionLog, CompactionReason, ContextUsage
from seam.contracts.events import AgentEvent, ContextCompacted, ContextWarning, Notice
from seam.contracts.messages import Message
from seam.contracts.model import ModelError, ModelProvider, ToolDefinition
from seam.contracts.personality import Personality
from seam.contracts.tools import Tool, ToolContext
from seam.core.compression import CompressionFailed, model_window
from seam.core.history import history_view

if TYPE_CHECKING:
    from seam.core.loop import AgentLoop

log = logging.getLogger("seam.context")

# After clearing old tool results, a summary is skipped if usage is below this share of
# the compression threshold (0.75 * 2/3 = 50% of the window by default).
CLEAR_TARGET = 2 / 3


class ContextSteps:
    loop: AgentLoop
    key: str
    turn_id: str
    model: ModelProvider
    new_messages: list[Message]
    seq: int

    # Events waiting for `run_start`, as factories of their sequence number.
    _context_pending: list[Callable[[int], AgentEvent]] | None = None
    # Incremental estimate: overhead of the system prompt and tools, and the messages
    # counted so far.
    _context_system: str | None = None
    _context_overhead = 0
    _context_counted = 0
    _context_tokens = 0
    _overflow_retried = False

    def _next(self) -> int:
        raise NotImplementedError

    async def _store(self, *messages: Message) -> None:
        raise NotImplementedError

    # -- events --

    def _context_event(self, make: Callable[[int], AgentEvent]) -> None:
        if self._context_pending is None:
            self._context_pending = []
        self._context_pending.append(make)

    def _context_flush(self) -> list[AgentEvent]:
        """Queued context events, numbered now (call right after `run_start`)."""
        pending = self._context_pending
        if not pending:
            return []
        self._context_pending = None
        return [make(self._next()) for make in pending]

    # -- prompt and history --

    async def _build_system(
        self, personality: Personality, tools: Sequence[Tool], ctx: ToolContext
    ) -> str:
        loop = self.loop
        key = self.key
        snapshot = await loop.memory.prefetch(key)
        built = await loop.context.build(
            key,
            soul=personality.soul,
            tool_names=[tool.name for tool in tools],
            memory=snapshot,
            storage=ctx.storage,
        )
        for kind, message in built.notices:
            self._context_event(partial(Notice, key, self.turn_id, kind=kind, message=message))
        return built.system

    async def _history(self) -> list[Message]:
        """The stored conversation as the model is sent it (after any compaction)."""
        loop = self.loop
        transcript = await loop.sessions.messages(self.key)
        view = history_view(transcript, loop.options.protect_first).messages
        limit = loop.options.history_limit
        return view[-limit:] if limit else view

    # -- fitting the window --

    def _window(self) -> int:
        return self.loop.options.context_window or model_window(self.model)

    def _estimate(
        self, system: str, definitions: Sequence[ToolDefinition], messages: list[Message]
    ) -> int:
        estimator = self.loop.estimator
        if self._context_system is not system:
            self._context_system = system
            self._context_overhead = estimator.text(system) + estimator.tools(definitions)
        counted = self._context_counted
        if counted > len(messages):  # replaced, not appended to: count again
            counted = self._context_tokens = 0
        counts = self.loop.context_counts
        if not counted and messages and not self.loop.options.history_limit:
            # The history of the last turn is this turn's prefix (not so under a
            # `history_limit`, whose window slides): count only what is new.
            known = counts.get(self.key)
            if (
                known is not None
                and known[0] <= len(messages)
                and messages[known[0] - 1] == known[1]
            ):
                counted, self._context_tokens = known[0], known[2]
        if counted < len(messages):
            self._context_tokens += estimator.messages(messages[counted:])
            counted = len(messages)
            counts[self.key] = (counted, messages[-1], self._context_tokens)
        self._context_counted = counted
        return self._context_overhead + self._context_tokens

    async def _fit_context(
        self,
        system: str,
        definitions: Sequence[ToolDefinition],
        messages: list[Message],
        *,
        reason: CompactionReason = "threshold",
    ) -> bool:
        """Warn and compact as the thresholds say; True when the history was compacted
        (`messages` is then replaced in place by the compacted view)."""
        loop = self.loop
        options = loop.options
        window = self._window()
        tokens = self._estimate(system, definitions, messages)
        if options.context_warn_at:
            self._check_warning(tokens, window, options.context_warn_at)
        if reason == "threshold":
            compress_at = options.compress_at
            if not compress_at or tokens < compress_at * window:
                return False
            if not loop.compressor.ready(self.key):
                return False
        return await self._compact(system, definitions, messages, reason)

    async def _overflow_compacted(
        self,
        error: ModelError,
        system: str,
        definitions: Sequence[ToolDefinition],
        messages: list[Message],
    ) -> bool:
        """After a context-overflow error: compact and say whether to retry (once a turn)."""
        if error.kind != "context_overflow" or self._overflow_retried:
            return False
        self._overflow_retried = True
        return await self._fit_context(system, definitions, messages, reason="overflow")

    def _check_warning(self, tokens: int, window: int, warn_at: float) -> None:
        warned = self.loop.context_warned
        key = self.key
        if tokens >= warn_at * window:
            if key not in warned:
                warned.add(key)
                turn_id = self.turn_id
                percent = tokens * 100 // window
                self._context_event(
                    lambda seq: ContextWarning(key, turn_id, seq, tokens, window, percent)
                )
        else:
            warned.discard(key)

    async def _compact(
        self,
        system: str,
        definitions: Sequence[ToolDefinition],
        messages: list[Message],
        reason: CompactionReason,
    ) -> bool:
        loop = self.loop
        key = self.key
        turn_id = self.turn_id
        options = loop.options
        estimator = loop.estimator
        window = self._window()
        compress_at = options.compress_at or 0.75
        overhead = estimator.text(system) + estimator.tools(definitions)
        transcript = await loop.sessions.messages(key)
        try:
            result = await loop.compressor.compact(
                key,
                transcript,
                model=self.model,
                overhead=overhead,
                target=int(window * compress_at * CLEAR_TARGET),
                protect_first=options.protect_first,
                protect_last=options.protect_last,
                reason=reason,
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # CompressionFailed, or a custom compressor's own error
            if not isinstance(exc, CompressionFailed):
                log.exception("compaction of %s failed", key)
            message = f"could not compress the conversation: {exc}"
            self._context_event(lambda seq: Notice(key, turn_id, seq, "context", message))
            return False
        if result is None:
            return False
        await self._store(result.marker)
        # The stored marker (redacted like everything stored) is what later turns read.
        marker = self.new_messages[-1] if self.new_messages else result.marker
        view = history_view([*transcript, marker], options.protect_first).messages
        limit = options.history_limit
        messages[:] = view[-limit:] if limit else view
        record = result.record
        sessions = loop.sessions
        if isinstance(sessions, CompactionLog):
            try:
                await sessions.record_compaction(key, record)
            except Exception:
                log.exception("could not record the compaction of %s", key)
        # The history changed anyway: the next turn may re-read the project files.
        loop.context.invalidate(key)
        self._context_counted = self._context_tokens = 0
        loop.context_counts.pop(key, None)
        tokens = self._estimate(system, definitions, messages)
        if reason != "manual" and tokens >= compress_at * window:
            # Everything left is protected: do not pay for a summary every request.
            loop.compressor.note_failure(key)
        if result.error:
            error = f"compressed only partly: {result.error}"
            self._context_event(lambda seq: Notice(key, turn_id, seq, "context", error))
        self._context_event(
            lambda seq: ContextCompacted(
                key,
                turn_id,
                seq,
                record.messages_before,
                len(messages),
                record.tokens_before,
                tokens,
                reason,
                record.summarised,
            )
        )
        if options.context_warn_at and tokens < options.context_warn_at * window:
            loop.context_warned.discard(key)
        return True

    # -- outside a turn: /compress and /usage --

    async def _context_setup(
        self, personality_id: str | None
    ) -> tuple[str, list[ToolDefinition]] | None:
        loop = self.loop
        info = await loop.sessions.get(self.key)
        if info is None:
            return None
        personality = loop.personality_for(personality_id or info.personality)
        if info.model:  # the session's own spec, as its turns use it
            personality = replace(personality, model=info.model)
        ctx = loop.tool_context(self.key, personality, turn_id=self.turn_id)
        tools = loop.tools.build(info.tools if info.tools is not None else personality.toolset, ctx)
        self.model = loop.model_for(personality)
        system = await self._build_system(personality, tools, ctx)
        return system, loop.tools.definitions(tools)

    async def compact_now(self, personality_id: str | None = None) -> list[AgentEvent]:
        """Compact the session's history now (prune and summarise); the events it made."""
        setup = await self._context_setup(personality_id)
        if setup is None:
            return []
        system, definitions = setup
        # `_compact` reads the transcript itself; the list only receives the new view.
        await self._compact(system, definitions, [], "manual")
        events = self._context_flush()
        self.loop.continue_seq(self.key, self.seq)
        return events

    async def measure(self, personality_id: str | None = None) -> ContextUsage | None:
        """Estimated size of the session's next request against the context window."""
        setup = await self._context_setup(personality_id)
        if setup is None:
            return None
        system, definitions = setup
        if self._context_pending:
            # Notices belong to the next real turn: forget the files read for this
            # estimate, so that turn reads them again and reports what it finds.
            self._context_pending = None
            self.loop.context.invalidate(self.key)
        tokens = self._estimate(system, definitions, await self._history())
        return ContextUsage(tokens, self._window())
