"""The `clarify` tool: ask the person a question mid-turn, through the surface.

The surface owns the conversation with the person, so it hands in the `ask` callable;
the tool only validates and frames. Without one (a cron job, a batch run) the model is
told to ask in its reply instead, which always works.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from seam.contracts.tool_spec import SpecTool, ToolSpec
from seam.contracts.tools import ToolContext, ToolError

Ask = Callable[[str, str, Sequence[str] | None], Awaitable[str]]

MAX_CHOICES = 10
MAX_QUESTION = 1000  # chars
NO_SURFACE = (
    "No one can be asked from here. Put the question in your reply instead and end the turn; "
    "the answer will come as the next message."
)


class Clarify(SpecTool):
    spec = ToolSpec(
        name="clarify",
        description=(
            "Ask the person a question and wait for the answer. "
            "Use only when you cannot go on without it."
        ),
        arguments={
            "question": {"type": "string", "maxLength": MAX_QUESTION},
            "choices": {
                "type": "array",
                "items": {"type": "string"},
                "maxItems": MAX_CHOICES,
                "description": "Suggested answers, if any.",
            },
        },
        required=("question",),
    )

    def __init__(self, ask: Ask | None = None) -> None:
        self._ask = ask

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        # Types and lengths are checked against the schema before `run`; blank text here.
        question: str = args["question"]
        if not question.strip():
            raise ToolError("argument 'question' must not be empty")
        choices = _choices(args.get("choices"))
        if self._ask is None:
            return NO_SURFACE
        try:
            answer = await self._ask(ctx.session_key, question.strip(), choices)
        except TimeoutError:
            return "The person did not answer in time. Go on with your best judgement, and say so."
        answer = answer.strip()
        return f"The person answered: {answer}" if answer else "The person gave no answer."


def _choices(value: list[str] | None) -> list[str] | None:
    if not value:
        return None
    if not all(choice.strip() for choice in value):
        raise ToolError("argument 'choices' must be a list of non-empty strings")
    return [choice.strip() for choice in value]
