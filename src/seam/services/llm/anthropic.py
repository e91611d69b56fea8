"""A ModelProvider for Anthropic's Messages API, streamed over httpx.

The contract's transcript is OpenAI-shaped; this module absorbs the differences: the
system prompt is a top-level list of blocks, tool calls are `tool_use` content blocks and
their results `tool_result` blocks inside a *user* message, and roles must alternate, so
consecutive messages of one role are merged into one. Prompt caching is explicit:
`cache_control` breakpoints mark the stable prefix (tools, system prompt, older history)
so every step of a tool loop reads that prefix from the cache instead of paying for it
again.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping, Sequence
from functools import partial
from typing import Any, ClassVar, Unpack

import httpx

from seam.contracts.messages import Message, ToolCall
from seam.contracts.model import (
    DoneChunk,
    ModelCapabilities,
    ModelChunk,
    ModelError,
    ModelRequest,
    ToolDefinition,
    UsageChunk,
)
from seam.services.llm.anthropic_events import (
    MessageState,
    content_chunks,
    finish_reason,
    usage_of,
)
from seam.services.llm.http import (
    HttpOptions,
    HttpProvider,
    json_body,
    tool_name,
)
from seam.services.llm.retry import classify_http_error
from seam.services.llm.sse import SSEDecoder
from seam.services.llm.tool_images import anthropic_content
from seam.services.llm.watch import StreamWatch

_SHAPE_ERRORS = (AttributeError, TypeError, KeyError, IndexError)
_TOOL_CHOICES: dict[str, dict[str, str]] = {
    "auto": {"type": "auto"},
    "required": {"type": "any"},
    "none": {"type": "none"},
}
# Extended thinking may only accompany tool choices that let the model answer freely.
_THINKING_TOOL_CHOICES = frozenset({"auto", "none"})
_MIN_THINKING_BUDGET = 1024  # the API's own minimum
_EPHEMERAL = {"type": "ephemeral"}
_TOOL_ID = re.compile(r"[A-Za-z0-9_-]+")
_NOT_TOOL_ID_CHAR = re.compile(r"[^A-Za-z0-9_-]")


class AnthropicProvider(HttpProvider):
    """Streams Messages API responses, retrying transient failures before any output.

    `base_url` is the API root without `/v1` (as in Anthropic's own SDKs).
    `thinking_budget` turns on extended thinking for every request that allows it (see
    `_thinking_allowed`); temperature is then not sent, as the API requires.
    """

    capabilities = ModelCapabilities(tools=True, streaming=True, thinking=True)
    _models_params: ClassVar[Mapping[str, Any]] = {"limit": 1000}

    def __init__(
        self,
        *,
        api_key: str | None,
        model: str,
        base_url: str = "https://api.anthropic.com",
        max_context_tokens: int = 200_000,
        max_tokens: int = 8192,
        thinking_budget: int | None = None,
        prompt_cache: bool = True,
        name: str = "anthropic",
        anthropic_version: str = "2023-06-01",
        **options: Unpack[HttpOptions],
    ) -> None:
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        if thinking_budget is not None and not (
            _MIN_THINKING_BUDGET <= thinking_budget < max_tokens
        ):
            raise ValueError(
                f"thinking_budget must be at least {_MIN_THINKING_BUDGET} and below max_tokens "
                f"({max_tokens}), got {thinking_budget}"
            )
        headers = {"anthropic-version": anthropic_version}
        if api_key:
            headers["x-api-key"] = api_key
        super().__init__(
            base_url=base_url,
            models_path="/v1/models",
            headers=headers,
            name=name,
            model=model,
            max_context_tokens=max_context_tokens,
            **options,
        )
        self._messages_url = f"{self._root}/v1/messages"
        self._max_tokens = max_tokens
        self._thinking_budget = thinking_budget
        self._prompt_cache = prompt_cache

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Stream one message; raises `ModelError` (bad input is reported right away)."""
        payload = self._payload(request)
        return self._retrying(partial(self._attempt, payload))

    # -- request -----------------------------------------------------------------------

    def _payload(self, request: ModelRequest) -> bytes:
        system, messages = self._transcript(request)
        max_tokens = request.max_tokens or self._max_tokens
        body: dict[str, Any] = {"model": request.model or self.model, "max_tokens": max_tokens}
        if system:
            body["system"] = system
        body["messages"] = messages
        tools: list[dict[str, Any]] = []
        if request.tools:
            offered = sorted(request.tools, key=tool_name)
            tools = [
                {
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.parameters,
                }
                for tool in offered
            ]
            body["tools"] = tools
            body["tool_choice"] = self._tool_choice(request.tool_choice, offered)
        if self._thinking_allowed(request, max_tokens, messages):
            body["thinking"] = {"type": "enabled", "budget_tokens": self._thinking_budget}
        elif request.temperature is not None:
            body["temperature"] = request.temperature
        if self._prompt_cache:
            _mark_stable_prefix(tools, system, messages)
        body["stream"] = True
        return json_body(body)

    def _transcript(
        self, request: ModelRequest
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """System blocks and alternating messages of content blocks.

        A system message inside the transcript (a compaction summary, say) joins the
        top-level system prompt: the API has no system role anywhere else. Messages left
        with no content (an empty assistant reply) are dropped, since the API rejects
        empty text blocks, and their neighbours then merge.
        """
        system: list[dict[str, Any]] = []
        if request.system:
            system.append({"type": "text", "text": request.system})
        messages: list[dict[str, Any]] = []
        for position, message in enumerate(request.messages):
            role: str = message.role
            content = message.content
            has_text = bool(content) and not content.isspace()
            if role == "user" and message.images:  # what the person's message shows
                blocks = anthropic_content(message)
            elif role == "user":
                blocks = [{"type": "text", "text": content}] if has_text else []
            elif role == "assistant":
                blocks = [{"type": "text", "text": content}] if has_text else []
                blocks += [_tool_use(call) for call in message.tool_calls]
            elif role == "tool":
                blocks = [self._tool_result(position, message)]
                role = "user"
            elif role == "system":
                if has_text:
                    system.append({"type": "text", "text": content})
                continue
            else:
                raise self._fatal(f"message {position} has unknown role {role!r}")
            if not blocks:
                continue
            if messages and messages[-1]["role"] == role:
                messages[-1]["content"] += blocks
            else:
                messages.append({"role": role, "content": blocks})
        return system, messages

    def _tool_result(self, position: int, message: Message) -> dict[str, Any]:
        if not message.tool_call_id:
            raise self._fatal(f"message {position} has role 'tool' but no tool_call_id")
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": _wire_id(message.tool_call_id),
        }
        if message.content:
            block["content"] = message.content
        if message.images:  # a tool's images, after its text (tool_images.py)
            block["content"] = anthropic_content(message)
        # The loop reports failed tools as text starting "error:" (Message has no flag).
        if message.content.startswith("error:"):
            block["is_error"] = True
        return block

    def _tool_choice(self, choice: str, tools: Sequence[ToolDefinition]) -> dict[str, str]:
        mode = _TOOL_CHOICES.get(choice)
        if mode is not None:
            return mode
        self._check_offered(choice, tools)
        return {"type": "tool", "name": choice}

    def _thinking_allowed(
        self, request: ModelRequest, max_tokens: int, messages: list[dict[str, Any]]
    ) -> bool:
        """Whether this request may carry extended thinking; when not, it is left off.

        The API refuses thinking when: the output cap leaves no room beyond the budget (a
        caller asking for a few tokens wants a short answer anyway); a tool use is forced;
        or the request continues a tool loop, since the assistant turn being continued
        must then begin with its signed thinking blocks, which the transcript does not
        keep (`Message` has no place for them). So within a turn the first step thinks
        and the steps after tool results do not.
        """
        budget = self._thinking_budget
        if budget is None or max_tokens <= budget:
            return False
        if request.tools and request.tool_choice not in _THINKING_TOOL_CHOICES:
            return False
        if messages and messages[-1]["role"] == "user":
            return not any(block["type"] == "tool_result" for block in messages[-1]["content"])
        return True

    # -- response ----------------------------------------------------------------------

    def _attempt(self, payload: bytes, deadline: float) -> AsyncGenerator[ModelChunk, None]:
        """One HTTP request, decoded event by event; every failure becomes a ModelError.

        Only data events other than `ping` count as progress for the idle limit: a server
        that keeps pinging but never answers is stalled.
        """
        state = MessageState()

        def ending() -> Iterator[ModelChunk]:
            yield UsageChunk(usage_of(state.counts))
            yield DoneChunk(finish_reason(state.stop_reason, bool(state.tool_uses)))

        return self._post_stream(
            self._messages_url,
            payload,
            deadline,
            lambda response, watch: self._events(response, watch, state),
            ending,
        )

    async def _events(
        self, response: httpx.Response, watch: StreamWatch, state: MessageState
    ) -> AsyncGenerator[ModelChunk, None]:
        """The chunks of a successful response's event stream; one that ends before
        `message_stop` is malformed (it was cut short).

        Read to the end of the body even after `message_stop`, so the connection goes
        back to the pool instead of being closed with unread bytes.
        """
        async for data in self._data_lines(response, SSEDecoder()):
            event = self._event(data)
            kind = self._kind(event, data)
            if kind == "ping":
                continue
            watch.got_event()
            for chunk in self._event_chunks(kind, event, data, state):
                yield chunk
            watch.waiting()
        if not state.stopped:
            raise self._malformed("the stream ended before message_stop")

    def _event_chunks(
        self, kind: str, event: Any, data: str, state: MessageState
    ) -> Iterator[ModelChunk]:
        """The chunks of one event; an `error` event or a shape the API does not send
        becomes a ModelError."""
        try:
            if kind == "error":
                raise self._stream_error(data)
            yield from content_chunks(kind, event, state)
        except _SHAPE_ERRORS as exc:
            raise self._shape_error(exc, data) from None

    def _kind(self, event: Any, data: str) -> Any:
        """The event's `type`, with an event that has none reported as malformed."""
        try:
            return event["type"]
        except _SHAPE_ERRORS as exc:
            raise self._shape_error(exc, data) from None

    def _shape_error(self, exc: Exception, data: str) -> ModelError:
        """The one-line malformed-stream error for an event of an unexpected shape."""
        return self._malformed(f"unexpected event shape ({exc!r}): {data[:200]!r}")

    # -- errors ------------------------------------------------------------------------

    def _stream_error(self, data: str) -> ModelError:
        """An `error` event inside a 200 stream: its `error.type` decides the kind."""
        return classify_http_error(None, data, {}, provider=self.name, now=self._clock())

    def _error_in_body(self, payload: dict[str, Any], line: str) -> ModelError | None:
        return self._stream_error(line) if payload.get("type") == "error" else None


def _tool_use(call: ToolCall) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": _wire_id(call.id),
        "name": call.name,
        "input": _tool_input(call.arguments),
    }


def _tool_input(arguments: str) -> Any:
    """The call's arguments as the object the API wants.

    Arguments that are not a JSON object (the model wrote bad JSON, which the loop
    already answered with an error result) go back as `{}`, so one bad call does not make
    the whole conversation unsendable.
    """
    try:
        value = json.loads(arguments)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _wire_id(call_id: str) -> str:
    """Anthropic accepts tool-use ids of `[A-Za-z0-9_-]` only; an id another provider
    minted (earlier in a fallback chain) is mapped the same way in `tool_use` and
    `tool_result`, so the pair still matches."""
    if _TOOL_ID.fullmatch(call_id):
        return call_id
    return _NOT_TOOL_ID_CHAR.sub("_", call_id)


def _mark_stable_prefix(
    tools: list[dict[str, Any]], system: list[dict[str, Any]], messages: list[dict[str, Any]]
) -> None:
    """Put `cache_control` breakpoints where the prompt stops changing between calls.

    The API caches the prefix up to each breakpoint (tools, then system, then messages):
    one after the tools, one after the system prompt, and one at the end of the
    second-to-last user message, the newest history the next step of a tool loop will
    send again unchanged. That is three of the four breakpoints the API allows.
    """
    if tools:
        tools[-1]["cache_control"] = _EPHEMERAL
    if system:
        system[-1]["cache_control"] = _EPHEMERAL
    seen_user = False
    for message in reversed(messages):
        if message["role"] != "user":
            continue
        if seen_user:
            message["content"][-1]["cache_control"] = _EPHEMERAL
            return
        seen_user = True
