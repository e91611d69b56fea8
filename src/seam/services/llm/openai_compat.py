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

import asyncio
import json
import re
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from functools import partial
from typing import Any, Literal

import httpx

from seam.contracts.messages import Message, ToolCall, Usage
from seam.contracts.model import (
    DoneChunk,
    FinishReason,
    ModelChunk,
    ModelError,
    ModelRequest,
    OnRetry,
    TextChunk,
    ThinkingChunk,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    ToolDefinition,
    UsageChunk,
    WarningChunk,
)
from seam.services.llm.http import (
    DEFAULT_TIMEOUT,
    HttpProvider,
    check_endpoint,
    json_body,
    tool_name,
)
from seam.services.llm.retry import Sleep, classify_http_error
from seam.services.llm.sse import NotEventStream, SSEDecoder
from seam.services.llm.text_tool_calls import recover_tool_calls, starts_like_call

TokenParam = Literal["auto", "max_tokens", "max_completion_tokens"]

_FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
}
_TOOL_CHOICE_MODES = frozenset({"auto", "none", "required"})
_EMPTY: Mapping[str, Any] = {}
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
        timeout: float = DEFAULT_TIMEOUT,
        connect_timeout: float | None = None,
        idle_timeout: float | None = None,
        max_retries: int = 3,
        backoff_base: float = 1.0,
        backoff_max: float = 30.0,
        client: httpx.AsyncClient | None = None,
        sleep: Sleep = asyncio.sleep,
        clock: Callable[[], float] = time.time,
        name: str = "openai",
        extra_headers: Mapping[str, str] | None = None,
        stale_timeout: float | None = None,
        token_param: TokenParam = "auto",
        parallel_tool_calls: bool | None = True,
        recover_text_tool_calls: bool = True,
        on_retry: OnRetry | None = None,
    ) -> None:
        """`timeout` is the whole request's deadline (retries included),
        `connect_timeout` the wait to connect, `idle_timeout` (or its older name
        `stale_timeout`) the longest wait for the next data event. `token_param` names
        the field for `max_tokens`; "auto" picks `max_completion_tokens` for OpenAI's
        reasoning models (see `_REASONING_MODEL`), `max_tokens` for everything else.
        `parallel_tool_calls` is sent with tools unless None (for servers that reject
        the field) or the model is one of OpenAI's o-series, which rejects it.
        `recover_text_tool_calls` turns tool calls a model wrote as text into real ones.
        """
        if stale_timeout is not None and stale_timeout <= 0:
            raise ValueError(f"stale_timeout must be > 0 seconds, got {stale_timeout}")
        if stale_timeout is not None:
            idle_timeout = stale_timeout
        root = check_endpoint(base_url, timeout, connect_timeout, idle_timeout)
        if token_param not in _TOKEN_PARAMS:
            raise ValueError(
                f"token_param must be one of {', '.join(sorted(_TOKEN_PARAMS))}, "
                f"got {token_param!r}"
            )
        headers = {**(extra_headers or {})}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        super().__init__(
            base_url=root,
            models_url=f"{root}/models",
            headers=headers,
            name=name,
            model=model,
            max_context_tokens=max_context_tokens,
            timeout=timeout,
            connect_timeout=connect_timeout,
            idle_timeout=idle_timeout,
            max_retries=max_retries,
            backoff_base=backoff_base,
            backoff_max=backoff_max,
            client=client,
            sleep=sleep,
            clock=clock,
            on_retry=on_retry,
        )
        self._chat_url = f"{root}/chat/completions"
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
        for position, message in enumerate(request.messages):
            messages.append(self._wire_message(position, message))
        model = request.model or self._model
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

    async def _attempt(
        self, payload: bytes, tools: Sequence[ToolDefinition], deadline: float
    ) -> AsyncGenerator[ModelChunk, None]:
        """One HTTP request, decoded chunk by chunk; every failure becomes a ModelError.

        With `tools`, text that opens like a tool call is held back until the stream
        ends, when it is either recovered into calls or shown after all.
        """
        url = self._chat_url
        calls = _ToolCalls()
        text = _HeldText() if tools else None
        finish: str | None = None
        usage: Usage | None = None
        watch = self._watch(deadline)
        try:
            async with (
                watch,
                self._client.stream(
                    "POST",
                    url,
                    content=payload,
                    headers=self._stream_headers,
                    timeout=self._timeout,
                ) as response,
            ):
                if not response.is_success:
                    body = await response.aread()
                    raise self._status_error(response.status_code, body, response.headers)
                decoder = SSEDecoder()
                done = False
                lines = response.aiter_lines()
                async for line in lines:
                    try:
                        data = decoder.feed(line)
                    except NotEventStream as exc:
                        raise await self._not_event_stream(exc.line, lines, response) from None
                    if data is None:
                        continue
                    if data == "[DONE]":
                        done = True
                        break
                    watch.got_event()  # the consumer's time, not the server's
                    event = self._event(data)
                    try:
                        if event.get("error"):
                            raise self._stream_error(event["error"])
                        choices = event.get("choices")
                        if choices:
                            choice = choices[0]
                            delta = choice.get("delta")
                            if delta:
                                reasoning = delta.get("reasoning_content") or delta.get("reasoning")
                                if not reasoning and delta.get("reasoning_details"):
                                    reasoning = _details_text(delta["reasoning_details"])
                                if reasoning:
                                    yield ThinkingChunk(reasoning)
                                content = delta.get("content")
                                if content:
                                    if text is None:
                                        yield TextChunk(content)
                                    else:
                                        shown = text.add(content)
                                        if shown:
                                            yield TextChunk(shown)
                                fragments = delta.get("tool_calls")
                                if fragments:
                                    for fragment in fragments:
                                        start, arguments = calls.add(fragment)
                                        if start is not None:
                                            yield start
                                        if arguments is not None:
                                            yield arguments
                            reason = choice.get("finish_reason")
                            if reason:
                                finish = reason
                        if event.get("usage"):
                            usage = _usage(event["usage"])
                    except (AttributeError, TypeError, KeyError, IndexError) as exc:
                        raise self._malformed(
                            f"unexpected chunk shape ({exc}): {data[:200]!r}"
                        ) from None
                    watch.waiting()
                if not done:
                    done = decoder.flush() == "[DONE]"
                if not done and finish is None:
                    raise self._malformed("the stream ended before [DONE] or a finish_reason")
        except TimeoutError:
            if watch.cause is None:
                raise
            raise self._watch_error(watch) from None
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, url) from exc
        ends = calls.ends(self._name)
        if text is not None:
            if ends:
                held = text.held_text()
                if held:
                    yield TextChunk(held)
            else:
                ends = []
                for item in self._recover_calls(text, tools):
                    if isinstance(item, ToolCallEnd):
                        ends.append(item)
                    else:
                        yield item
        for end in ends:
            yield end
        if usage is not None:
            yield UsageChunk(usage)
        yield DoneChunk(_finish_reason(finish, bool(ends)))

    def _recover_calls(self, text: _HeldText, tools: Sequence[ToolDefinition]) -> list[ModelChunk]:
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
            out.append(ToolCallStart(index, call.id, call.name))
            out.append(ToolCallDelta(index, call.arguments))
            out.append(ToolCallEnd(index, call))
        return out

    # -- errors ------------------------------------------------------------------------

    def _stream_error(self, error: Any) -> ModelError:
        """An error object sent inside a 200 stream (OpenRouter, vLLM do this)."""
        code = error.get("code") if isinstance(error, dict) else None
        status = code if isinstance(code, int) and 400 <= code <= 599 else None
        return classify_http_error(
            status, json.dumps({"error": error}), {}, provider=self._name, now=self._clock()
        )

    def _error_in_body(self, payload: dict[str, Any], line: str) -> ModelError | None:
        return self._stream_error(payload["error"]) if payload.get("error") else None


class _HeldText:
    """The answer's text, held back while it may still turn out to be a tool call.

    Deltas pass straight through once the text cannot be a call; until then (and for
    good once it surely opens like one) they wait for the end of the stream.
    """

    __slots__ = ("_held", "_parts", "_sure")

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._held: list[str] | None = []
        self._sure = False

    def add(self, content: str) -> str | None:
        """Take a delta; return the text to show now, if any."""
        held = self._held
        if held is None:
            self._parts.append(content)
            return content
        held.append(content)
        if self._sure:
            return None
        verdict = starts_like_call("".join(held))
        if verdict is None:
            return None
        if verdict:
            self._sure = True
            return None
        shown = "".join(held)
        self._held = None
        self._parts.append(shown)
        return shown

    def held_text(self) -> str | None:
        """The text not shown yet, or None when it has been shown as it came."""
        return None if self._held is None else "".join(self._held)

    def shown_text(self) -> str:
        return "".join(self._parts)


class _Call:
    __slots__ = ("id", "name", "parts")

    def __init__(self, call_id: str | None, name: str) -> None:
        # Servers are stateless about ids (they only pair calls with results in the next
        # request), so a synthesised one is as good as theirs, and it never changes
        # between ToolCallStart and ToolCallEnd.
        self.id = call_id or f"call_{uuid.uuid4().hex[:24]}"
        self.name = name
        self.parts: list[str] = []


class _ToolCalls:
    """Tool-call fragments accumulated by index until the stream ends.

    The id and name usually arrive in a call's first fragment only and the arguments are
    split anywhere; several calls may interleave. Fragments without an index (a few
    servers) continue the last call unless they bring a new id.
    """

    __slots__ = ("_calls", "_last")

    def __init__(self) -> None:
        self._calls: dict[int, _Call] = {}
        self._last = 0

    def __bool__(self) -> bool:
        return bool(self._calls)

    def add(self, fragment: Any) -> tuple[ToolCallStart | None, ToolCallDelta | None]:
        call_id = fragment.get("id")
        function = fragment.get("function") or _EMPTY
        index = fragment.get("index")
        if index is None:
            index = self._index_for(call_id)
        self._last = index
        start = None
        call = self._calls.get(index)
        if call is None:
            call = self._calls[index] = _Call(call_id, function.get("name") or "")
            start = ToolCallStart(index, call.id, call.name)
        elif not call.name and function.get("name"):
            call.name = function["name"]
        arguments = function.get("arguments")
        if not arguments:
            return start, None
        if type(arguments) is not str:  # a few servers send the object itself
            arguments = json.dumps(arguments, ensure_ascii=False)
        call.parts.append(arguments)
        return start, ToolCallDelta(index, arguments)

    def _index_for(self, call_id: str | None) -> int:
        if not self._calls:
            return 0
        if call_id and all(call.id != call_id for call in self._calls.values()):
            return max(self._calls) + 1
        return self._last

    def ends(self, provider: str) -> list[ToolCallEnd]:
        """One complete call per index, in index order; no arguments means `{}`."""
        ends = []
        for index in sorted(self._calls):
            call = self._calls[index]
            if not call.name:
                raise ModelError(
                    "retryable",
                    f"malformed stream: tool call {index} never received a name",
                    provider=provider,
                )
            arguments = "".join(call.parts) or "{}"
            ends.append(ToolCallEnd(index, ToolCall(call.id, call.name, arguments)))
        return ends


def _details_text(details: Any) -> str:
    """The readable text of OpenRouter's `reasoning_details` (encrypted parts have none)."""
    if not isinstance(details, list):
        return ""
    return "".join(
        part.get("text") or part.get("summary") or ""
        for part in details
        if isinstance(part, dict) and part.get("type") != "reasoning.encrypted"
    )


def _usage(raw: Mapping[str, Any]) -> Usage:
    prompt_details = raw.get("prompt_tokens_details") or _EMPTY
    completion_details = raw.get("completion_tokens_details") or _EMPTY
    return Usage(
        input_tokens=raw.get("prompt_tokens") or 0,
        output_tokens=raw.get("completion_tokens") or 0,
        cache_read_tokens=prompt_details.get("cached_tokens") or 0,
        reasoning_tokens=completion_details.get("reasoning_tokens") or 0,
    )


def _finish_reason(raw: str | None, had_tool_calls: bool) -> FinishReason:
    reason = _FINISH_REASONS.get(raw, "stop") if raw else "stop"
    # Some local servers say "stop" after tool calls; the calls are what the loop needs.
    if had_tool_calls and reason == "stop":
        return "tool_calls"
    return reason
