"""Measuring a request against the context window: the window's size, the incremental
token estimate, and what to say when the window is too small. Pure figures: nothing
here stores or streams anything."""

from __future__ import annotations

from collections.abc import Sequence

from seam.contracts.messages import Message
from seam.contracts.model import ModelProvider
from seam.core.compression import model_window
from seam.core.turn_deps import ContextDeps, ContextEstimate, LoopOptions, Turn

# After clearing old tool results, a summary is skipped if usage is below this share of
# the compression threshold (0.75 * 2/3 = 50% of the window by default).
CLEAR_TARGET = 2 / 3
# The fixed part of a request (system prompt + tool schemas) may take at most this share
# of the window; past it the conversation has too little room, and the person is told.
FIXED_SHARE = 0.5


def window(options: LoopOptions, model: ModelProvider) -> int:
    return options.context_window or model_window(model)


def estimate(
    deps: ContextDeps,
    turn: Turn,
    est: ContextEstimate,
    system: str,
    messages: Sequence[Message],
) -> tuple[int, ContextEstimate]:
    """Estimated tokens of a request, and the estimate to start from next time; counts
    only what `est` did not."""
    estimator = deps.estimator
    overhead = est.overhead
    if est.system != system:
        overhead = estimator.text(system) + estimator.tools(turn.definitions)
    counted, tokens = est.counted, est.tokens
    if counted > len(messages):  # replaced, not appended to: count again
        counted = tokens = 0
    key = turn.session_key
    if not counted and messages and not deps.options.history_limit:
        # The history of the last turn is this turn's prefix (not so under a
        # `history_limit`, whose window slides): count only what is new.
        known = deps.counts.get(key)
        if known is not None and known[0] <= len(messages) and messages[known[0] - 1] == known[1]:
            counted, tokens = known[0], known[2]
    if counted < len(messages):
        tokens += estimator.messages(messages[counted:])
        counted = len(messages)
        deps.counts[key] = (counted, messages[-1], tokens)
    return overhead + tokens, ContextEstimate(system, overhead, counted, tokens)


def room_problem(fixed: int, tokens: int, size: int, *, compacted: bool = False) -> str | None:
    """What is wrong when the window is too small for the request, with the figures;
    None when it fits. `fixed` is the system prompt and tool schemas, `tokens` the whole
    request. Shared with `seam doctor`, which asks with `tokens == fixed`."""
    if tokens < size and fixed < FIXED_SHARE * size:
        return None  # checked before every request: no text is built when it fits
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
    return f"{fixed_part}. Raise [context] window or give the personality fewer tools"
