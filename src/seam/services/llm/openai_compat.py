"""A ModelProvider for any OpenAI-compatible chat-completions endpoint.

OpenAI, OpenRouter, vLLM, Ollama and llama.cpp's server all speak this wire format, with
differences this module absorbs so the loop never sees them: reasoning arrives as
`reasoning_content` or `reasoning`, tool-call ids may be missing, usage may come in its
own final chunk (or on every chunk), and some local servers finish with "stop" right
after emitting tool calls.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from functools import partial
from typing import Any

import httpx

from seam.contracts.messages import Message, ToolCall, Usage
from seam.contracts.model import (
    DoneChunk,
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
    ToolDefinition,
    UsageChunk,
)
from seam.services.llm.retry import RetryPolicy, Sleep, classify_http_error, retry_stream
from seam.services.llm.sse import NotEventStream, SSEDecoder

_FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
}
_TOOL_CHOICE_MODES = frozenset({"auto", "none", "required"})
_CAPABILITIES = ModelCapabilities(tools=True, streaming=True)
_EMPTY: Mapping[str, Any] = {}


class OpenAICompatProvider:
    """Streams chat completions over HTTP, retrying transient failures before any output."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        model: str,
        max_context_tokens: int = 128_000,
        timeout: float = 60.0,
        max_retries: int = 3,
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
        client: httpx.AsyncClient | None = None,
        sleep: Sleep = asyncio.sleep,
        clock: Callable[[], float] = time.time,
        name: str = "openai",
        extra_headers: Mapping[str, str] | None = None,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http:// or https:// URL, got {base_url!r}")
        if timeout <= 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout}")
        root = base_url.rstrip("/")
        self._chat_url = f"{root}/chat/completions"
        self._models_url = f"{root}/models"
        self._name = name
        self._model = model
        self._max_context_tokens = max_context_tokens
        self._timeout = httpx.Timeout(timeout)
        self._policy = RetryPolicy(max_retries, backoff_base, backoff_max)
        self._sleep = sleep
        self._clock = clock
        headers = {**(extra_headers or {})}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._headers = headers
        self._stream_headers = {
            **headers,
            "Content-Type": "application/json",
            "Accept": "text/event-stream",
        }
        self._owns_client = client is None
        self._client = client or _default_client(root, self._timeout)

    @property
    def name(self) -> str:
        return self._name

    @property
    def model(self) -> str:
        return self._model

    @property
    def max_context_tokens(self) -> int:
        return self._max_context_tokens

    @property
    def capabilities(self) -> ModelCapabilities:
        return _CAPABILITIES

    def count_tokens(self, text: str) -> int:
        """A cheap estimate (about four characters a token): good enough for budgeting."""
        return (len(text) + 3) // 4

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Stream one completion; raises `ModelError` (bad input is reported right away)."""
        payload = self._payload(request)
        return retry_stream(partial(self._attempt, payload), self._policy, self._sleep)

    async def list_models(self) -> list[str]:
        """The model ids the endpoint offers (for `seam doctor`); errors as in `stream`."""
        url = self._models_url
        try:
            response = await self._client.get(url, headers=self._headers, timeout=self._timeout)
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, url) from exc
        if not response.is_success:
            raise self._status_error(response.status_code, response.content, response.headers)
        try:
            return [entry["id"] for entry in response.json()["data"]]
        except (ValueError, KeyError, TypeError):
            raise ModelError(
                "retryable",
                f"malformed model list from {url}: {response.text[:200]!r}",
                status=response.status_code,
                provider=self._name,
            ) from None

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    # -- request -----------------------------------------------------------------------

    def _payload(self, request: ModelRequest) -> bytes:
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        for position, message in enumerate(request.messages):
            messages.append(self._wire_message(position, message))
        body: dict[str, Any] = {
            "model": request.model or self._model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            tools = sorted(request.tools, key=_tool_name)
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
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if request.temperature is not None:
            body["temperature"] = request.temperature
        return json.dumps(
            body, ensure_ascii=False, separators=(",", ":"), default=_mapping_to_dict
        ).encode()

    def _wire_message(self, position: int, message: Message) -> dict[str, Any]:
        if message.role == "tool":
            if not message.tool_call_id:
                raise ModelError(
                    "fatal",
                    f"message {position} has role 'tool' but no tool_call_id",
                    provider=self._name,
                )
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
        if not any(tool.name == choice for tool in tools):
            offered = ", ".join(tool.name for tool in tools)
            raise ModelError(
                "fatal",
                f"tool_choice {choice!r} is neither auto/none/required nor an offered tool "
                f"({offered})",
                provider=self._name,
            )
        return {"type": "function", "function": {"name": choice}}

    # -- response ----------------------------------------------------------------------

    async def _attempt(self, payload: bytes) -> AsyncGenerator[ModelChunk, None]:
        """One HTTP request, decoded chunk by chunk; every failure becomes a ModelError."""
        url = self._chat_url
        try:
            async with self._client.stream(
                "POST", url, content=payload, headers=self._stream_headers, timeout=self._timeout
            ) as response:
                if not response.is_success:
                    body = await response.aread()
                    raise self._status_error(response.status_code, body, response.headers)
                decoder = SSEDecoder()
                calls = _ToolCalls()
                finish: str | None = None
                usage: Usage | None = None
                done = False
                async for line in response.aiter_lines():
                    try:
                        data = decoder.feed(line)
                    except NotEventStream as exc:
                        raise self._not_event_stream(exc.line, response) from None
                    if data is None:
                        continue
                    if data == "[DONE]":
                        done = True
                        break
                    try:
                        event = json.loads(data)
                    except ValueError:
                        raise self._malformed(
                            f"invalid JSON in a data line: {data[:200]!r}"
                        ) from None
                    try:
                        if event.get("error"):
                            raise self._stream_error(event["error"])
                        choices = event.get("choices")
                        if choices:
                            choice = choices[0]
                            delta = choice.get("delta")
                            if delta:
                                reasoning = delta.get("reasoning_content") or delta.get("reasoning")
                                if reasoning:
                                    yield ThinkingChunk(reasoning)
                                content = delta.get("content")
                                if content:
                                    yield TextChunk(content)
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
                if not done:
                    done = decoder.flush() == "[DONE]"
                if not done and finish is None:
                    raise self._malformed("the stream ended before [DONE] or a finish_reason")
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, url) from exc
        for end in calls.ends(self._name):
            yield end
        if usage is not None:
            yield UsageChunk(usage)
        yield DoneChunk(_finish_reason(finish, bool(calls)))

    # -- errors ------------------------------------------------------------------------

    def _status_error(self, status: int, body: bytes, headers: Mapping[str, str]) -> ModelError:
        return classify_http_error(
            status,
            body.decode("utf-8", "replace"),
            headers,
            provider=self._name,
            now=self._clock(),
        )

    def _stream_error(self, error: Any) -> ModelError:
        """An error object sent inside a 200 stream (OpenRouter, vLLM do this)."""
        code = error.get("code") if isinstance(error, dict) else None
        status = code if isinstance(code, int) and 400 <= code <= 599 else None
        return classify_http_error(
            status, json.dumps({"error": error}), {}, provider=self._name, now=self._clock()
        )

    def _not_event_stream(self, line: str, response: httpx.Response) -> ModelError:
        if line.startswith("{"):
            try:
                payload = json.loads(line)
            except ValueError:
                payload = None
            if isinstance(payload, dict) and payload.get("error"):
                return self._stream_error(payload["error"])
        content_type = response.headers.get("content-type", "none")
        return self._malformed(
            f"the response is not server-sent events (content-type {content_type}): {line[:200]!r}"
        )

    def _malformed(self, detail: str) -> ModelError:
        return ModelError("retryable", f"malformed stream: {detail}", provider=self._name)

    def _transport_error(self, exc: httpx.HTTPError, url: str) -> ModelError:
        seconds = self._timeout.read
        if isinstance(exc, httpx.ConnectTimeout):
            message = f"timed out after {seconds}s connecting to {url}"
        elif isinstance(exc, httpx.TimeoutException):
            message = f"timed out after {seconds}s waiting for {url}"
        elif isinstance(exc, httpx.ConnectError):
            message = f"could not connect to {url}: {exc}"
        elif isinstance(exc, httpx.UnsupportedProtocol | httpx.LocalProtocolError):
            return ModelError("fatal", f"cannot send to {url}: {exc}", provider=self._name)
        elif isinstance(exc, httpx.TransportError):
            message = f"connection to {url} lost: {exc}"
        elif isinstance(exc, httpx.DecodingError):
            message = f"malformed stream: cannot decode the body: {exc}"
        else:
            return ModelError("fatal", f"request to {url} failed: {exc}", provider=self._name)
        return ModelError("retryable", message, provider=self._name)


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


def _default_client(base_url: str, timeout: httpx.Timeout) -> httpx.AsyncClient:
    """A client that reads no environment (proxy variables included: services never do;
    wiring injects a configured client when a proxy is needed).

    A plain-http endpoint (a local llama.cpp, vLLM or Ollama) never speaks TLS, since
    redirects are not followed, so it gets an empty TLS context instead of the CA bundle,
    which takes tens of milliseconds to load; any TLS attempt with it fails verification.
    """
    verify: ssl.SSLContext | bool = True
    if base_url.startswith("http://"):
        verify = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    return httpx.AsyncClient(timeout=timeout, trust_env=False, verify=verify)


def _tool_name(tool: ToolDefinition) -> str:
    return tool.name


def _mapping_to_dict(value: object) -> dict[str, Any]:
    """Tool schemas are typed `Mapping`: read-only views must still serialise."""
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"cannot send {type(value).__name__} to the model: not JSON")
