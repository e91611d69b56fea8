"""Where a model step goes after the model answered, when some of its calls are the
caller's to run (`contracts/turn_extras.py`).

The calls to the session's own tools run as usual (`RunTools`); the calls to external
tools are not run. The turn then ends with `Finish("tool_calls")`: the assistant message
with every call is stored, the session's calls have their results, the external ones
have none yet, so the caller's results slot in next and the transcript stays valid for
any provider. A model may call a session tool, read its result and only then call an
external one: that is an ordinary `RunTools` back to the model, then this stop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from seam.contracts.messages import ToolCall
from seam.contracts.turn_extras import NO_EXTRAS, TurnExtras
from seam.core.tool_step import RunTools
from seam.core.turn import Finish
from seam.core.turn_deps import Turn, TurnStep

# The finish reason of a turn stopped by calls for its caller (OpenAI's own word).
EXTERNAL_FINISH = "tool_calls"


def after_answer(
    calls: Sequence[ToolCall], external: frozenset[str], then: TurnStep, finish: str
) -> TurnStep:
    """The step after a model answer: `Finish` (no calls), `RunTools` then `then` (only
    session tools), else the session tools' calls (if any) then a stop for the caller."""
    if not calls:
        return Finish(finish, answered=True)
    if not external or not any(c.name in external for c in calls):
        return RunTools(tuple(calls), then=then)
    stop = Finish(EXTERNAL_FINISH)
    own = tuple(c for c in calls if c.name not in external)
    return RunTools(own, then=stop) if own else stop


def with_extras(turn: Turn, extras: TurnExtras) -> Turn:
    """The turn with the caller's extras: its tools offered after the session's (a name
    the session already has stays the session's tool), its note in the system prompt."""
    if extras == NO_EXTRAS:
        return turn
    own = {d.name for d in turn.definitions}
    offered = (*turn.definitions, *(d for d in extras.external if d.name not in own))
    system = turn.system if extras.note is None else f"{turn.system}\n\n{extras.note}"
    kept = replace(extras, external=tuple(d for d in extras.external if d.name not in own))
    return replace(turn, definitions=offered, system=system, extras=kept)


class ExtrasBook:
    """Submission id -> the extras its turn runs with, in this process: the caller hands
    them over before its submission is driven (they are not stored: a turn another
    process rescues after a crash runs without them). Bounded: the oldest go first."""

    __slots__ = ("_by_id", "_limit")

    def __init__(self, limit: int = 1024) -> None:
        self._by_id: dict[str, TurnExtras] = {}
        self._limit = limit

    def offer(self, submission_id: str, extras: TurnExtras) -> None:
        self._by_id.pop(submission_id, None)
        self._by_id[submission_id] = extras
        while len(self._by_id) > self._limit:
            del self._by_id[next(iter(self._by_id))]

    def get(self, submission_id: str) -> TurnExtras:
        return self._by_id.get(submission_id, NO_EXTRAS)


__all__ = ["EXTERNAL_FINISH", "ExtrasBook", "after_answer", "with_extras"]
