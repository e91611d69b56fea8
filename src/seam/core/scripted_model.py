"""A model that follows a script: the test double for the model's *decisions*.

Like pydantic-ai's `TestModel`, it ships in the package so anyone can drive an agent in
three lines with no network. Everything under it (the loop, tools, stores) is real.

    model = ScriptedModel([tool_step(call("read_file", path="note.txt")), text_step("It says hi")])
    loop = AgentLoop(model=model)
    events = [e async for e in loop.run("s1", "What does note.txt say?")]
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from seam.contracts.messages import ToolCall, Usage
from seam.contracts.model import (
    DoneChunk,
    ErrorKind,
    FinishReason,
    ModelCapabilities,
    ModelChunk,
    ModelError,
    ModelRequest,
    TextChunk,
    ThinkingChunk,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageChunk,
)


@dataclass(frozen=True, slots=True)
class Step:
    """One model response. `deltas` wins over `text` when given (exact streaming shape)."""

    text: str = ""
    deltas: Sequence[str] | None = None
    calls: Sequence[ToolCall] = ()
    thinking: str = ""
    error: ModelError | None = None
    # Raise `error` after streaming this many text deltas (a mid-stream failure).
    error_after: int = 0
    delay: float = 0.0
    # Never produce a chunk after the first `error_after` deltas: for streaming timeouts.
    stall: bool = False
    usage: Usage | None = None
    finish: FinishReason | None = None


_ids = itertools.count(1)


def call(name: str, arguments: str | dict[str, Any] | None = None, /, **kwargs: Any) -> ToolCall:
    """A tool call; `arguments` may be raw text (to script malformed JSON) or a dict."""
    if arguments is None:
        arguments = kwargs
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ToolCall(id=f"call_{next(_ids)}", name=name, arguments=raw)


def text_step(text: str, *, chunk: int = 0, usage: Usage | None = None) -> Step:
    """A text answer, streamed in `chunk`-character deltas (0: one delta)."""
    deltas = [text[i : i + chunk] for i in range(0, len(text), chunk)] if chunk else None
    return Step(text=text, deltas=deltas, usage=usage)


def tool_step(*calls: ToolCall, text: str = "") -> Step:
    return Step(text=text, calls=calls)


def error_step(kind: ErrorKind, message: str = "scripted failure", **kwargs: Any) -> Step:
    return Step(error=ModelError(kind, message, provider="scripted", **kwargs))


ScriptItem = Step | Callable[[ModelRequest], Step]


class ScriptedModel:
    """Pops one step per model call; records every request it was sent.

    A step may also be a function of the request, for replies that depend on what the
    loop sent (e.g. echo a tool result). Running out of script is a clear error.
    """

    def __init__(
        self,
        steps: Iterable[ScriptItem] = (),
        *,
        name: str = "scripted",
        model: str = "scripted-model",
        max_context_tokens: int = 128_000,
    ) -> None:
        self._steps: list[ScriptItem] = list(steps)
        self.name = name
        self.model = model
        self.max_context_tokens = max_context_tokens
        self.capabilities = ModelCapabilities()
        self.requests: list[ModelRequest] = []

    @property
    def remaining(self) -> int:
        return len(self._steps)

    def add(self, *steps: ScriptItem) -> None:
        self._steps.extend(steps)

    def count_tokens(self, text: str) -> int:
        return (len(text) + 3) // 4

    async def aclose(self) -> None:
        return None

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        self.requests.append(request)
        if not self._steps:
            raise ModelError("fatal", "the scripted model ran out of steps", provider=self.name)
        item = self._steps.pop(0)
        step = item if isinstance(item, Step) else item(request)
        if step.delay:
            await asyncio.sleep(step.delay)
        if step.thinking:
            yield ThinkingChunk(step.thinking)
        deltas = step.deltas if step.deltas is not None else ([step.text] if step.text else [])
        for n, delta in enumerate(deltas):
            if (step.error or step.stall) and n == step.error_after:
                break
            yield TextChunk(delta)
        if step.stall:
            await asyncio.Event().wait()
        if step.error is not None:
            raise step.error
        for index, tool_call in enumerate(step.calls):
            yield ToolCallStart(index, tool_call.id, tool_call.name)
            yield ToolCallDelta(index, tool_call.arguments)
            yield ToolCallEnd(index, tool_call)
        text_len = sum(map(len, deltas))
        yield UsageChunk(
            step.usage or Usage(input_tokens=_estimate(request), output_tokens=text_len // 4 + 1)
        )
        finish: FinishReason = step.finish or ("tool_calls" if step.calls else "stop")
        yield DoneChunk(finish)


def _estimate(request: ModelRequest) -> int:
    # Cheap on purpose (system prompt and the newest message only): benchmarks drive this
    # model, and scanning a growing history would be counted as framework overhead.
    last = request.messages[-1].content if request.messages else ""
    return (len(request.system) + len(last)) // 4 + len(request.messages)
