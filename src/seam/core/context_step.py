"""The context window inside a turn: build the prompt, load the history, keep it fitting.

Before every model request the model step calls `fit_context`, which estimates the
request incrementally (only messages added since the last estimate are counted), queues a
`context_warning` when usage crosses the warning threshold, and past the compression
threshold compacts the history (`core/compaction_step.py`). Queued events go out with
`run_start`, or right after the estimate once the turn has started. Every function here
takes `ContextDeps` and returns the turn's next state rather than changing it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import partial

from seam.contracts.context import CompactionReason, PromptInputs
from seam.contracts.events import ContextWarning, Notice
from seam.contracts.messages import Message
from seam.contracts.model import ModelError
from seam.contracts.personality import Personality
from seam.contracts.tools import Tool, ToolContext
from seam.core.compaction_step import compact, context_notice
from seam.core.context_fit import estimate, room_problem, window
from seam.core.history import history_view
from seam.core.turn_deps import ContextDeps, LoopOptions, Turn, TurnState

log = logging.getLogger("seam.context")

__all__ = [
    "build_system",
    "compact",
    "estimate",
    "fit_context",
    "load_history",
    "overflow_compacted",
    "room_problem",
    "window",
]

# Marks, in `ContextDeps.warned`, a session already told its window is too small.
_ROOM_TOLD = "\x00room:"


# -- prompt and history --


async def build_system(
    deps: ContextDeps,
    session_key: str,
    turn_id: str,
    personality: Personality,
    tools: Sequence[Tool],
    ctx: ToolContext,
) -> tuple[str, tuple[partial[Notice], ...]]:
    """The system prompt, and the builder's notices (a project file left out), which
    wait for `run_start`."""
    snapshot = await deps.memory.prefetch(session_key)
    inputs = PromptInputs(
        personality.soul, [tool.name for tool in tools], snapshot, ctx.storage, ctx.working_dir
    )
    built = await deps.builder.build(session_key, inputs)
    notices = tuple(
        partial(Notice, session_key, turn_id, kind=kind, message=message)
        for kind, message in built.notices
    )
    return built.system, notices


async def load_history(deps: ContextDeps, session_key: str) -> tuple[Message, ...]:
    """The stored conversation as the model is sent it (after any compaction)."""
    transcript = await deps.store.sessions.messages(session_key)
    return request_view(deps.options, transcript)


def request_view(options: LoopOptions, transcript: Sequence[Message]) -> tuple[Message, ...]:
    """What of a stored transcript a request sends: the view after its last compaction
    marker, cut to `history_limit`."""
    view = history_view(transcript, options.protect_first).messages
    limit = options.history_limit
    return tuple(view[-limit:] if limit else view)


# -- fitting the window --


async def fit_context(
    deps: ContextDeps,
    turn: Turn,
    state: TurnState,
    system: str,
    *,
    reason: CompactionReason = "threshold",
) -> tuple[TurnState, bool]:
    """Warn and compact as the thresholds say; the next state, and whether the history
    was compacted (the state's `messages` then hold the compacted view)."""
    options = deps.options
    size = window(options, turn.model)
    tokens, est = estimate(deps, turn, state.estimate, system, state.messages)
    state = state.but(estimate=est)
    if options.context_warn_at:
        state = _check_warning(deps, turn, state, tokens, size, options.context_warn_at)
    compacted = False
    if reason != "threshold" or (
        options.compress_at
        and tokens >= options.compress_at * size
        and deps.compressor.ready(turn.session_key)
    ):
        state, compacted = await compact(deps, turn, state, system, reason)
        if compacted:
            tokens, est = estimate(deps, turn, state.estimate, system, state.messages)
            state = state.but(estimate=est)
    return _check_room(deps, turn, state, tokens, size, compacted), compacted


async def overflow_compacted(
    deps: ContextDeps, turn: Turn, state: TurnState, error: ModelError, system: str
) -> tuple[TurnState, bool]:
    """After a context-overflow error: compact, and say whether to retry (once a turn)."""
    if error.kind != "context_overflow" or state.overflow_retried:
        return state, False
    state = state._replace(overflow_retried=True)
    return await fit_context(deps, turn, state, system, reason="overflow")


def _check_room(
    deps: ContextDeps, turn: Turn, state: TurnState, tokens: int, size: int, compacted: bool
) -> TurnState:
    """Say once per session, with the figures, when the window cannot hold the request
    or its fixed part leaves the conversation too little room."""
    mark = _ROOM_TOLD + turn.session_key
    if mark in deps.warned:
        return state
    problem = room_problem(state.estimate.overhead, tokens, size, compacted=compacted)
    if problem is None:
        return state
    deps.warned.add(mark)
    return context_notice(turn, state, problem)


def _check_warning(
    deps: ContextDeps, turn: Turn, state: TurnState, tokens: int, size: int, warn_at: float
) -> TurnState:
    """Queue one `context_warning` per crossing of the warning threshold."""
    warned = deps.warned
    key = turn.session_key
    if tokens < warn_at * size:
        warned.discard(key)
        return state
    if key in warned:
        return state
    warned.add(key)
    percent = tokens * 100 // size
    warning = partial(
        ContextWarning,
        key,
        turn.turn_id,
        tokens=tokens,
        window=size,
        percent=percent,
    )
    return state._replace(waiting=(*state.waiting, warning))
