"""What a caller adds to one turn beyond its input: tools the caller runs itself, the
sampling settings of the model calls, a note for the system prompt, and whether the turn
goes on from tool results already in the transcript instead of a new message.

An OpenAI-compatible client (`apps/web/openai/`) defines tools of its own and runs them
itself: their definitions are offered to the model beside the session's tools, and a
call to one of them is not run here. The turn stops there (`core/external_calls.py`)
with the call in the transcript, unanswered, and `done` says `finish_reason:
"tool_calls"`; the caller's next request appends the results and starts a turn with
`resume`, which calls the model again. Plain values only: the steps read them from the
`Turn`. The core keeps them per submission (`core/external_calls.ExtrasBook`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from seam.contracts.messages import ImagePart, Message, ToolCall
from seam.contracts.model import ToolDefinition


@dataclass(frozen=True, slots=True)
class Sampling:
    """The model calls' settings (None: the provider's default)."""

    max_tokens: int | None = None
    temperature: float | None = None
    # "auto", "none", "required" or a tool name, as `ModelRequest.tool_choice`.
    tool_choice: str = "auto"


@dataclass(frozen=True, slots=True)
class TurnExtras:
    """See the module docstring. `external`: the caller's tools (their calls end the
    turn); `note`: added to the system prompt; `resume`: start with a model call;
    `images`: what the caller's new message shows (for a model that sees images; the
    caller checked that it does), sent with that message on each model call of the turn
    and not stored (the transcript keeps the message's text)."""

    external: tuple[ToolDefinition, ...] = ()
    sampling: Sampling = Sampling()
    note: str | None = None
    resume: bool = False
    images: tuple[ImagePart, ...] = ()

    @property
    def external_names(self) -> frozenset[str]:
        return frozenset(tool.name for tool in self.external)


NO_EXTRAS = TurnExtras()


def with_images(
    messages: tuple[Message, ...], images: tuple[ImagePart, ...]
) -> tuple[Message, ...]:
    """`messages` with `images` on the newest user message (the turn's own input)."""
    for at in range(len(messages) - 1, -1, -1):
        if messages[at].role == "user":
            shown = replace(messages[at], images=images)
            return (*messages[:at], shown, *messages[at + 1 :])
    return messages


def unanswered_calls(messages: Sequence[Message]) -> list[ToolCall]:
    """The calls of the transcript's last assistant message that have no result yet:
    what a turn stopped by external calls left for its caller to answer."""
    answered: set[str] = set()
    for message in reversed(messages):
        if message.role == "tool" and message.tool_call_id:
            answered.add(message.tool_call_id)
        elif message.role == "assistant":
            return [c for c in message.tool_calls if c.id not in answered]
        else:
            return []
    return []


__all__ = ["NO_EXTRAS", "Sampling", "TurnExtras", "unanswered_calls", "with_images"]
