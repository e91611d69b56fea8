"""A ModelProvider for any OpenAI-compatible chat-completions endpoint.

OpenAI, OpenRouter, vLLM, Ollama and llama.cpp's server all speak this wire format, with
differences this module absorbs so the loop never sees them: reasoning arrives as
`reasoning_content`, `reasoning` or OpenRouter's `reasoning_details`, tool-call ids may be
missing, usage may come in its own final chunk (or on every chunk), some local servers
finish with "stop" right after emitting tool calls, and some write the call as text (see
`text_tool_calls`). OpenAI's reasoning models want `max_completion_tokens` instead of
`max_tokens` and refuse a temperature.

A stream is watched for progress: only `data:` events count, so a server that keeps the
connection alive with `: ping` comments, or trickles bytes, but never answers is still
seen as stalled (see `watch`).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping, Sequence
from contextlib import aclosing
from functools import partial
from typing import Any, Literal, Unpack

import httpx

from seam.contracts.messages import Message
from seam.contracts.model import (
    DoneChunk,
    ModelChunk,
    ModelError,
    ModelRequest,
    TextChunk,
    ToolCallEnd,
    ToolDefinition,
    UsageChunk,
    WarningChunk,
)
from seam.services.llm.http import (
    HttpOptions,
    HttpProvider,
    json_body,
    tool_name,
)
from seam.services.llm.openai_chunks import (
    HeldText,
    StreamState,
    choice_chunks,
    finish_reason,
    usage_of,
)
from seam.services.llm.retry import classify_http_error
from seam.services.llm.sse import SSEDecoder
from seam.services.llm.text_tool_calls import recover_tool_calls
from seam.services.llm.tool_chunks import whole_call
from seam.services.llm.tool_images import openai_messages, sees_images
from seam.services.llm.watch import StreamWatch

TokenParam = Literal["auto", "max_tokens", "max_completion_tokens"]

_TOOL_CHOICE_MODES = frozenset({"auto", "none", "required"})
_TOKEN_PARAMS = frozenset({"auto", "max_tokens", "max_completion_tokens"})
# OpenAI's reasoning models (o1, o3, o4-mini, gpt-5 and their dated or sized variants)
# reject `max_tokens` and any temperature but the default. Matched on the bare model name
# only: a routed name such as OpenRouter's `openai/o3` goes through a router that
# translates `max_tokens` and drops what the model refuses on its own.
_REASONING_MODEL = re.compile(r"(?:o[134]|gpt-5)(?:$|[-._:@])", re.IGNORECASE)
# The o-series also answers 400 "Unsupported parameter: 'parallel_tool_calls'", even false.
_NO_PARALLEL_FIELD = re.compile(r"o[134](?:$|[-._:@])", re.IGNORECASE)


class OpenAICompatProvider(HttpProvider):
    """Streams chat completions over HTTP, retrying transient failures before any output."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        model: str,
        max_context_tokens: int = 128_000,
        name: str = "openai",
        extra_headers: Mapping[str, str] | None = None,
        stale_timeout: float | None = None,
        token_param: TokenParam = "auto",
        parallel_tool_calls: bool | None = True,
        recover_text_tool_calls: bool = True,
        **options: Unpack[HttpOptions],
    ) -> None:
        """`options` are the `HttpOptions`: `timeout` is the whole request's deadline
        (retries included), `connect_timeout` the wait to connect, `idle_timeout` (or its
        older name `stale_timeout`, here) the longest wait for the next data event.
        `token_param` names the field for `max_tokens`; "auto" picks
        `max_completion_tokens` for OpenAI's reasoning models (see `_REASONING_MODEL`),
        `max_tokens` for everything else. `parallel_tool_calls` is sent with tools unless
        None (for servers that reject the field) or the model is one of OpenAI's
        o-series, which rejects it. `recover_text_tool_calls` turns tool calls a model
        wrote as text into real ones.
        """
        options["idle_timeout"] = _idle_timeout(options.get("idle_timeout"), stale_timeout)
        _check_token_param(token_param)
        super().__init__(
            base_url=base_url,
            models_path="/models",
            headers=_headers(api_key, extra_headers),
            name=name,
            model=model,
            max_context_tokens=max_context_tokens,
            **options,
        )
        self._chat_url = f"{self._root}/chat/completions"
        self._token_param = token_param
        self._parallel_tool_calls = parallel_tool_calls
        self._recover = recover_text_tool_calls

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Stream one completion; raises `ModelError` (bad input is reported right away)."""
        payload = self._payload(request)
        # Recovery looks for calls to these tools in the text; none offered, none found.
        tools = request.tools if self._recover and request.tool_choice != "none" else ()
        return self._retrying(partial(self._attempt, payload, tools))

    # -- request -----------------------------------------------------------------------

    def _payload(self, request: ModelRequest) -> bytes:
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        model = request.model or self.model
        # Tool results' images follow them for a model that sees images (tool_images.py).
        messages += openai_messages(request.messages, self._wire_message, sees_images(model))
        body: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            tools = sorted(request.tools, key=tool_name)
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    },
                }
                for tool in tools
            ]
            body["tool_choice"] = self._tool_choice(request.tool_choice, tools)
            if self._parallel_tool_calls is not None and not _NO_PARALLEL_FIELD.match(model):
                body["parallel_tool_calls"] = self._parallel_tool_calls
        reasoning_model = _REASONING_MODEL.match(model) is not None
        if request.max_tokens is not None:
            field = self._token_param
            if field == "auto":
                field = "max_completion_tokens" if reasoning_model else "max_tokens"
            body[field] = request.max_tokens
        if request.temperature is not None and not reasoning_model:
            body["temperature"] = request.temperature
        return json_body(body)

    def _wire_message(self, position: int, message: Message) -> dict[str, Any]:
        if message.role == "tool":
            if not message.tool_call_id:
                raise self._fatal(f"message {position} has role 'tool' but no tool_call_id")
            return {
                "role": "tool",
                "tool_call_id": message.tool_call_id,
                "content": message.content,
            }
        if message.role == "assistant" and message.tool_calls:
            return {
                "role": "assistant",
                "content": message.content or None,
                "tool_calls": [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments},
                    }
                    for call in message.tool_calls
                ],
            }
        return {"role": message.role, "content": message.content}

    def _tool_choice(self, choice: str, tools: Sequence[ToolDefinition]) -> Any:
        if choice in _TOOL_CHOICE_MODES:
            return choice
        self._check_offered(choice, tools)
        return {"type": "function", "function": {"name": choice}}

    # -- response ----------------------------------------------------------------------

    def _attempt(
        self, payload: bytes, tools: Sequence[ToolDefinition], deadline: float
    ) -> AsyncGenerator[ModelChunk, None]:
        """One HTTP request, decoded chunk by chunk; every failure becomes a ModelError.

        With `tools`, text that opens like a tool call is held back until the stream
        ends, when it is either recovered into calls or shown after all.
        """
        state = StreamState(HeldText() if tools else None)
        return self._post_stream(
            self._chat_url,
            payload,
            deadline,
            lambda response, watch: self._events(response, watch, state),
            lambda: self._closing_chunks(state, tools),
        )

    async def _events(
        self, response: httpx.Response, watch: StreamWatch, state: StreamState
    ) -> AsyncGenerator[ModelChunk, None]:
        """The chunks of a successful response's event stream, until `[DONE]` (the rest
        of the body is then read, so the connection goes back to the pool).

        Only `data:` events count as progress for `watch`, and the time the consumer
        takes with a chunk is not counted against the server. A stream that ends with
        neither `[DONE]` nor a finish reason is malformed (it was cut short).
        """
        decoder = SSEDecoder()
        done = False
        async with aclosing(self._data_lines(response, decoder)) as events:
            async for data in events:
                if data == "[DONE]":
                    done = True
                    break
                watch.got_event()  # the consumer's time, not the server's
                for chunk in self._event_chunks(data, state):
                    yield chunk
                watch.waiting()
            if done:
                watch.got_event()  # the answer is whole: the server's time is up
                await self._drain(events)
        if not done:
            done = decoder.flush() == "[DONE]"
        if not done and state.finish is None:
            raise self._malformed("the stream ended before [DONE] or a finish_reason")

    def _event_chunks(self, data: str, state: StreamState) -> Iterator[ModelChunk]:
        """The chunks of one `data:` event; an error event or a shape the wire format
        does not allow becomes a ModelError."""
        event = self._event(data)
        try:
            if event.get("error"):
                raise self._stream_error(event["error"])
            choices = event.get("choices")
            if choices:
                yield from choice_chunks(choices[0], state)
            if event.get("usage"):
                state.usage = usage_of(event["usage"])
        except (AttributeError, TypeError, KeyError, IndexError) as exc:
            raise self._malformed(f"unexpected chunk shape ({exc}): {data[:200]!r}") from None

    def _closing_chunks(
        self, state: StreamState, tools: Sequence[ToolDefinition]
    ) -> Iterator[ModelChunk]:
        """After the stream: held-back text (or the calls recovered from it), the tool
        calls, usage, and the finish reason ("tool_calls" whenever calls were made)."""
        ends = state.calls.ends(self.name)
        if state.text is not None:
            if ends:
                held = state.text.held_text()
                if held:
                    yield TextChunk(held)
            else:
                ends = []
                for item in self._recover_calls(state.text, tools):
                    if isinstance(item, ToolCallEnd):
                        ends.append(item)
                    else:
                        yield item
        yield from ends
        if state.usage is not None:
            yield UsageChunk(state.usage)
        yield DoneChunk(finish_reason(state.finish, bool(ends)))

    def _recover_calls(self, text: HeldText, tools: Sequence[ToolDefinition]) -> list[ModelChunk]:
        """Tool calls the model wrote as text, as if the server had sent them.

        Text still held back comes first: what recovery left of it when calls were found,
        all of it when none were. Text already shown stays shown (a call after prose
        cannot be taken back from the screen, but it still runs).
        """
        held = text.held_text()
        everything = held if held is not None else text.shown_text()
        if not everything:
            return []
        recovery = recover_tool_calls(everything, tools)
        out: list[ModelChunk] = []
        shown = recovery.remaining_text if recovery.calls else held
        if held is not None and shown:
            out.append(TextChunk(shown))
        out += [
            WarningChunk(f"a tool call written as text was not used: {reason}")
            for reason in recovery.rejected
        ]
        for index, call in enumerate(recovery.calls):
            out += whole_call(index, call)
        return out

    # -- errors ------------------------------------------------------------------------

    def _stream_error(self, error: Any) -> ModelError:
        """An error object sent inside a 200 stream (OpenRouter, vLLM do this)."""
        code = error.get("code") if isinstance(error, dict) else None
        status = code if isinstance(code, int) and 400 <= code <= 599 else None
        return classify_http_error(
            status, json.dumps({"error": error}), {}, provider=self.name, now=self._clock()
        )

    def _error_in_body(self, payload: dict[str, Any], line: str) -> ModelError | None:
        return self._stream_error(payload["error"]) if payload.get("error") else None


def _idle_timeout(idle_timeout: float | None, stale_timeout: float | None) -> float | None:
    """`stale_timeout` is the older name of `idle_timeout`: when given, it wins, and it
    is checked here because `check_endpoint` only sees the value that wins."""
    if stale_timeout is not None and stale_timeout <= 0:
        raise ValueError(f"stale_timeout must be > 0 seconds, got {stale_timeout}")
    return stale_timeout if stale_timeout is not None else idle_timeout


def _check_token_param(token_param: str) -> None:
    """A misspelt `token_param` is refused when the provider is built, not at the first
    request."""
    if token_param not in _TOKEN_PARAMS:
        raise ValueError(
            f"token_param must be one of {', '.join(sorted(_TOKEN_PARAMS))}, got {token_param!r}"
        )


def _headers(api_key: str | None, extra_headers: Mapping[str, str] | None) -> dict[str, str]:
    """The configured extra headers, plus a bearer token when there is a key (a local
    server usually needs none)."""
    headers = {**(extra_headers or {})}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers
