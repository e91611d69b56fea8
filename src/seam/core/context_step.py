"""The context window inside a turn: build the prompt, load the history, keep it fitting.

Before every model request the model step calls `fit_context`, which estimates the
request incrementally (only messages added since the last estimate are counted), queues a
`context_warning` when usage crosses the warning threshold, and past the compression
threshold compacts the history through the loop's compressor, stores the marker, records
the figures and queues `context_compacted`. Queued events go out with `run_start`, or
right after the estimate once the turn has started.

`compact` also serves `/compress` outside a turn (`core/turn_driver.py`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

from seam.contracts.context import CompactionLog, CompactionReason
from seam.contracts.events import ContextCompacted, ContextWarning, Notice
from seam.contracts.messages import Message
from seam.contracts.model import ModelError, ModelProvider, ToolDefinition
from seam.contracts.personality import Personality
from seam.contracts.tools import Tool, ToolContext
from seam.core.compression import CompressionFailed, model_window
from seam.core.history import history_view
from seam.core.turn import TurnDeps, TurnState, store

if TYPE_CHECKING:
    from seam.core.loop import AgentLoop

log = logging.getLogger("seam.context")

# After clearing old tool results, a summary is skipped if usage is below this share of
# the compression threshold (0.75 * 2/3 = 50% of the window by default).
CLEAR_TARGET = 2 / 3
# The fixed part of a request (system prompt + tool schemas) may take at most this share
# of the window; past it the conversation has too little room, and the person is told.
FIXED_SHARE = 0.5
# Marks, in `AgentLoop.context_warned`, a session already told its window is too small.
_ROOM_TOLD = "\x00room:"


# -- prompt and history --


async def build_system(
    loop: AgentLoop,
    session_key: str,
    turn_id: str,
    personality: Personality,
    tools: Sequence[Tool],
    ctx: ToolContext,
    state: TurnState,
) -> str:
    """The system prompt; the builder's notices (a project file left out) wait in
    `state` for `run_start`."""
    snapshot = await loop.memory.prefetch(session_key)
    built = await loop.context.build(
        session_key,
        soul=personality.soul,
        tool_names=[tool.name for tool in tools],
        memory=snapshot,
        storage=ctx.storage,
        working_dir=ctx.working_dir,
    )
    for kind, message in built.notices:
        state.waiting.append(partial(Notice, session_key, turn_id, kind=kind, message=message))
    return built.system


async def load_history(loop: AgentLoop, session_key: str) -> list[Message]:
    """The stored conversation as the model is sent it (after any compaction)."""
    transcript = await loop.sessions.messages(session_key)
    view = history_view(transcript, loop.options.protect_first).messages
    limit = loop.options.history_limit
    return view[-limit:] if limit else view


# -- fitting the window --


def window(loop: AgentLoop, model: ModelProvider) -> int:
    return loop.options.context_window or model_window(model)


def estimate(
    deps: TurnDeps,
    state: TurnState,
    system: str,
    definitions: Sequence[ToolDefinition],
    messages: list[Message],
) -> int:
    """Estimated tokens of a request; counts only what the last estimate did not."""
    loop = deps.loop
    estimator = loop.estimator
    est = state.estimate
    if est.system != system:
        est.system = system
        est.overhead = estimator.text(system) + estimator.tools(definitions)
    counted = est.counted
    if counted > len(messages):  # replaced, not appended to: count again
        counted = est.tokens = 0
    counts = loop.context_counts
    key = deps.session_key
    if not counted and messages and not loop.options.history_limit:
        # The history of the last turn is this turn's prefix (not so under a
        # `history_limit`, whose window slides): count only what is new.
        known = counts.get(key)
        if known is not None and known[0] <= len(messages) and messages[known[0] - 1] == known[1]:
            counted, est.tokens = known[0], known[2]
    if counted < len(messages):
        est.tokens += estimator.messages(messages[counted:])
        counted = len(messages)
        counts[key] = (counted, messages[-1], est.tokens)
    est.counted = counted
    return est.overhead + est.tokens


async def fit_context(
    deps: TurnDeps, state: TurnState, system: str, *, reason: CompactionReason = "threshold"
) -> bool:
    """Warn and compact as the thresholds say; True when the history was compacted
    (`state.messages` then holds the compacted view)."""
    loop = deps.loop
    options = loop.options
    size = window(loop, deps.model)
    tokens = estimate(deps, state, system, deps.definitions, state.messages)
    if options.context_warn_at:
        _check_warning(deps, state, tokens, size, options.context_warn_at)
    compacted = False
    if reason != "threshold" or (
        options.compress_at
        and tokens >= options.compress_at * size
        and loop.compressor.ready(deps.session_key)
    ):
        compacted = await compact(deps, state, system, reason)
        if compacted:
            tokens = estimate(deps, state, system, deps.definitions, state.messages)
    _check_room(deps, state, tokens, size, compacted)
    return compacted


def room_problem(fixed: int, tokens: int, size: int, *, compacted: bool = False) -> str | None:
    """What is wrong when the window is too small for the request, with the figures;
    None when it fits. `fixed` is the system prompt and tool schemas, `tokens` the whole
    request. Shared with `seam doctor`, which asks with `tokens == fixed`."""
    share = fixed * 100 // max(size, 1)
    fixed_part = (
        f"the system prompt and tool schemas take ~{fixed:,} of the {size:,}-token "
        f"context window ({share}%), leaving ~{max(size - fixed, 0):,} for the conversation"
    )
    if tokens >= size:
        after = "even after compressing, " if compacted else ""
        return (
            f"{after}the request is ~{tokens:,} tokens, over the {size:,}-token context "
            f"window; {fixed_part}. Raise [context] window or give the personality fewer tools"
        )
    if fixed >= FIXED_SHARE * size:
        return f"{fixed_part}. Raise [context] window or give the personality fewer tools"
    return None


def _check_room(deps: TurnDeps, state: TurnState, tokens: int, size: int, compacted: bool) -> None:
    """Say once per session, with the figures, when the window cannot hold the request
    or its fixed part leaves the conversation too little room."""
    told = deps.loop.context_warned
    mark = _ROOM_TOLD + deps.session_key
    if mark in told:
        return
    problem = room_problem(state.estimate.overhead, tokens, size, compacted=compacted)
    if problem is None:
        return
    told.add(mark)
    key = deps.session_key
    turn_id = deps.turn_id
    state.waiting.append(lambda seq: Notice(key, turn_id, seq, "context", problem))


async def overflow_compacted(
    deps: TurnDeps, state: TurnState, error: ModelError, system: str
) -> bool:
    """After a context-overflow error: compact and say whether to retry (once a turn)."""
    if error.kind != "context_overflow" or state.overflow_retried:
        return False
    state.overflow_retried = True
    return await fit_context(deps, state, system, reason="overflow")


def _check_warning(
    deps: TurnDeps, state: TurnState, tokens: int, size: int, warn_at: float
) -> None:
    warned = deps.loop.context_warned
    key = deps.session_key
    if tokens >= warn_at * size:
        if key not in warned:
            warned.add(key)
            turn_id = deps.turn_id
            percent = tokens * 100 // size
            state.waiting.append(
                lambda seq: ContextWarning(key, turn_id, seq, tokens, size, percent)
            )
    else:
        warned.discard(key)


async def compact(deps: TurnDeps, state: TurnState, system: str, reason: CompactionReason) -> bool:
    """Compact the stored history (prune, then summarise); True when it did. The new view
    replaces `state.messages`; the events wait in `state.waiting`."""
    loop = deps.loop
    key = deps.session_key
    turn_id = deps.turn_id
    options = loop.options
    estimator = loop.estimator
    definitions = deps.definitions
    size = window(loop, deps.model)
    compress_at = options.compress_at or 0.75
    overhead = estimator.text(system) + estimator.tools(definitions)
    transcript = await loop.sessions.messages(key)
    try:
        result = await loop.compressor.compact(
            key,
            transcript,
            model=deps.model,
            overhead=overhead,
            target=int(size * compress_at * CLEAR_TARGET),
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
        state.waiting.append(lambda seq: Notice(key, turn_id, seq, "context", message))
        return False
    if result is None:
        return False
    await store(deps, state, result.marker)
    # The stored marker (redacted like everything stored) is what later turns read.
    marker = state.stored[-1] if state.stored else result.marker
    view = history_view([*transcript, marker], options.protect_first).messages
    limit = options.history_limit
    messages = state.messages = view[-limit:] if limit else view
    record = result.record
    sessions = loop.sessions
    if isinstance(sessions, CompactionLog):
        try:
            await sessions.record_compaction(key, record)
        except Exception:
            log.exception("could not record the compaction of %s", key)
    # The history changed anyway: the next turn may re-read the project files.
    loop.context.invalidate(key)
    state.estimate.counted = state.estimate.tokens = 0
    loop.context_counts.pop(key, None)
    tokens = estimate(deps, state, system, definitions, messages)
    if reason != "manual" and tokens >= compress_at * size:
        # Everything left is protected: do not pay for a summary every request.
        loop.compressor.note_failure(key)
    if result.error:
        error = f"compressed only partly: {result.error}"
        state.waiting.append(lambda seq: Notice(key, turn_id, seq, "context", error))
    state.waiting.append(
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
    if options.context_warn_at and tokens < options.context_warn_at * size:
        loop.context_warned.discard(key)
    return True
