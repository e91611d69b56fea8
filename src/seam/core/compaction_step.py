"""Compaction inside a turn (and for `/compress`): run the loop's compressor over the
stored history, store its marker, switch the request to the compacted view, and queue
what the person is told (`context_compacted`, notices when it failed or did only part).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from functools import partial

from seam.contracts.context import Compaction, CompactionGoal, CompactionLog, CompactionReason
from seam.contracts.events import ContextCompacted, Notice
from seam.contracts.messages import Message
from seam.core.compression import CompressionFailed
from seam.core.context_fit import CLEAR_TARGET, estimate, window
from seam.core.history import history_view
from seam.core.turn import store
from seam.core.turn_deps import ContextDeps, Turn, TurnState

log = logging.getLogger("seam.context")


async def compact(
    deps: ContextDeps, turn: Turn, state: TurnState, system: str, reason: CompactionReason
) -> tuple[TurnState, bool]:
    """Compact the stored history (prune, then summarise); the next state, and whether
    it did. The new view replaces the state's `messages`; the events wait in `waiting`."""
    if turn.transcript is not None:  # what the turn's writer holds back, stored first
        await turn.transcript((), ())
    transcript = await deps.store.sessions.messages(turn.session_key)
    result = await _run_compressor(deps, turn, transcript, system, reason)
    if isinstance(result, str):
        return context_notice(turn, state, f"could not compress the conversation: {result}"), False
    if result is None:
        return state, False
    state = await _adopt(deps, turn, state, transcript, result)
    tokens, est = estimate(deps, turn, state.estimate, system, state.messages)
    state = state._replace(estimate=est)
    return _report(deps, turn, state, result, tokens, reason), True


async def _run_compressor(
    deps: ContextDeps,
    turn: Turn,
    transcript: Sequence[Message],
    system: str,
    reason: CompactionReason,
) -> Compaction | str | None:
    """The compressor's result, None when there was nothing to compact, or why it failed
    (a failure is reported, never raised: the turn goes on uncompacted)."""
    options = deps.options
    size = window(options, turn.model)
    overhead = deps.estimator.text(system) + deps.estimator.tools(turn.definitions)
    try:
        goal = CompactionGoal(
            model=turn.model,
            overhead=overhead,
            target=int(size * (options.compress_at or 0.75) * CLEAR_TARGET),
            protect_first=options.protect_first,
            protect_last=options.protect_last,
            reason=reason,
        )
        return await deps.compressor.compact(turn.session_key, transcript, goal)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # CompressionFailed, or a custom compressor's own error
        if not isinstance(exc, CompressionFailed):
            log.exception("compaction of %s failed", turn.session_key)
        return str(exc)


async def _adopt(
    deps: ContextDeps,
    turn: Turn,
    state: TurnState,
    transcript: Sequence[Message],
    result: Compaction,
) -> TurnState:
    """Store the marker and send the compacted view from now on; the history changed, so
    the prompt's project files and every token count are fresh after it."""
    key = turn.session_key
    state = await store(deps.store, turn, state, result.marker)
    # The stored marker (redacted like everything stored) is what later turns read.
    marker = state.stored[-1] if state.stored else result.marker
    view = history_view([*transcript, marker], deps.options.protect_first).messages
    limit = deps.options.history_limit
    messages = tuple(view[-limit:] if limit else view)
    sessions = deps.store.sessions
    if isinstance(sessions, CompactionLog):
        try:
            await sessions.record_compaction(key, result.record)
        except Exception:
            log.exception("could not record the compaction of %s", key)
    deps.builder.invalidate(key)
    deps.counts.pop(key, None)
    counted_afresh = state.estimate._replace(counted=0, tokens=0)
    return state._replace(messages=messages, estimate=counted_afresh)


def _report(
    deps: ContextDeps,
    turn: Turn,
    state: TurnState,
    result: Compaction,
    tokens: int,
    reason: CompactionReason,
) -> TurnState:
    """Queue `context_compacted` (and a notice when it compacted only partly); back off
    when even the compacted request is past the threshold."""
    options = deps.options
    key = turn.session_key
    size = window(options, turn.model)
    if reason != "manual" and tokens >= (options.compress_at or 0.75) * size:
        # Everything left is protected: do not pay for a summary every request.
        deps.compressor.note_failure(key)
    if result.error:
        state = context_notice(turn, state, f"compressed only partly: {result.error}")
    record = result.record
    compacted = partial(
        ContextCompacted,
        key,
        turn.turn_id,
        messages_before=record.messages_before,
        messages_after=len(state.messages),
        tokens_before=record.tokens_before,
        tokens_after=tokens,
        reason=reason,
        summarised=record.summarised,
    )
    if options.context_warn_at and tokens < options.context_warn_at * size:
        deps.warned.discard(key)
    return state._replace(waiting=(*state.waiting, compacted))


def context_notice(turn: Turn, state: TurnState, message: str) -> TurnState:
    """`state` with a `context` notice waiting to be sent."""
    notice = partial(Notice, turn.session_key, turn.turn_id, kind="context", message=message)
    return state._replace(waiting=(*state.waiting, notice))
