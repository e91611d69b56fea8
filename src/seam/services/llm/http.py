"""What every streaming HTTP model provider shares, whatever its wire format.

Endpoint and timeout checks, client ownership, headers, retry settings, the model list
and the turning of failed responses and transport errors into `ModelError`s are the same
for every API; only the request body and the stream's events differ, and those stay in
the provider that speaks them.

Three bounds keep every request finite: `connect_timeout` (reaching the server),
`idle_timeout` (the longest wait for the next event, counted in parsed events so a
trickling or keep-alive-only server still times out; see `watch`) and `timeout`, the
deadline of the whole request, retries and their back-off included.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import aclosing
from importlib.util import find_spec
from typing import Any, ClassVar, TypedDict, TypeVar, Unpack

import httpx

from seam.contracts.model import (
    RETRYABLE_KINDS,
    ModelCapabilities,
    ModelChunk,
    ModelError,
    OnRetry,
    ToolDefinition,
)
from seam.services.llm.lean_http import LeanTransport
from seam.services.llm.retry import (
    ProviderError,
    RetryPolicy,
    Sleep,
    classify_http_error,
    classify_transport_error,
    out_of_time,
    retry_stream,
    stalled,
)
from seam.services.llm.sse import LineSplitter, NotEventStream, SSEDecoder
from seam.services.llm.watch import StreamWatch

T = TypeVar("T")
# What turns a successful response's event stream into chunks (a provider's `_events`).
EventReader = Callable[[httpx.Response, StreamWatch], AsyncGenerator[ModelChunk, None]]
DEFAULT_TIMEOUT = 600.0
DEFAULT_CONNECT_TIMEOUT = 5.0
DEFAULT_IDLE_TIMEOUT = 60.0
# What a body that is not an event stream may cost to read for the error message.
_NOT_SSE_LINES = 200
_NOT_SSE_CHARS = 64_000
_SAID_CHARS = 200
# How long the rest of a body may take after the answer is whole (see `_drain`): past
# it, the connection is closed rather than kept.
_DRAIN_SECONDS = 1.0
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]+>")


class HttpOptions(TypedDict, total=False):
    """How a provider reaches its API, the same for every HTTP provider; each optional,
    the default after it. `timeout`: the whole request's deadline, retries included."""

    timeout: float  # DEFAULT_TIMEOUT
    connect_timeout: float | None  # None: DEFAULT_CONNECT_TIMEOUT (never over `timeout`)
    idle_timeout: float | None  # None: DEFAULT_IDLE_TIMEOUT (never over `timeout`)
    max_retries: int  # 3
    backoff_base: float  # 1.0 seconds
    backoff_max: float  # 30.0 seconds
    client: httpx.AsyncClient | None  # None: the provider makes (and closes) its own
    sleep: Sleep  # asyncio.sleep
    clock: Callable[[], float]  # time.time
    on_retry: OnRetry | None  # None


class HttpProvider:
    """The ModelProvider plumbing around one HTTP API; subclasses add `stream`.

    A subclass checks its own arguments before calling `__init__`, which checks the
    endpoint and timeouts first: a bad one is reported before a client, and its CA
    bundle, is made.
    """

    capabilities: ClassVar[ModelCapabilities] = ModelCapabilities(tools=True, streaming=True)
    # Query parameters for the model list (Anthropic pages it; OpenAI-style servers don't).
    _models_params: ClassVar[Mapping[str, Any] | None] = None

    def __init__(
        self,
        *,
        base_url: str,
        models_path: str,
        headers: dict[str, str],
        name: str,
        model: str,
        max_context_tokens: int,
        **options: Unpack[HttpOptions],
    ) -> None:
        """`base_url` is the API root as given (checked first, with the timeouts, so a
        bad one is reported before a client, and its CA bundle, is made); `models_path`
        is the model list's path below it; `headers` go with every request
        (authentication, API version). `options` are the `HttpOptions`."""
        timeout = options.get("timeout", DEFAULT_TIMEOUT)
        connect_timeout = options.get("connect_timeout")
        idle_timeout = options.get("idle_timeout")
        self._root = check_endpoint(base_url, timeout, connect_timeout, idle_timeout)
        self._models_url = self._root + models_path
        self.name = name
        self.model = model
        self.max_context_tokens = max_context_tokens
        self._request_timeout = timeout
        self._connect_timeout = min(_positive(connect_timeout, DEFAULT_CONNECT_TIMEOUT), timeout)
        self._idle_timeout = min(_positive(idle_timeout, DEFAULT_IDLE_TIMEOUT), timeout)
        # httpx's per-read timeout backs up the event watch (same limit); waiting for a
        # free pooled connection is bounded by the request's deadline.
        self._timeout = httpx.Timeout(
            timeout,
            connect=self._connect_timeout,
            read=self._idle_timeout,
            write=self._idle_timeout,
        )
        self._policy = RetryPolicy(
            options.get("max_retries", 3),
            options.get("backoff_base", 1.0),
            options.get("backoff_max", 30.0),
        )
        self._sleep = options.get("sleep", asyncio.sleep)
        self._clock = options.get("clock", time.time)
        self._on_retry = options.get("on_retry")
        self._headers = headers
        self._stream_headers = {
            **headers,
            "Content-Type": "application/json",
            "Accept": "text/event-stream",
        }
        client = options.get("client")
        self._owns_client = client is None
        self._client = client or default_client(self._root, self._timeout)

    def count_tokens(self, text: str) -> int:
        """A cheap estimate (about four characters a token): good enough for budgeting."""
        return (len(text) + 3) // 4

    async def list_models(self) -> list[str]:
        """The model ids the endpoint offers the key (for `seam doctor`); errors as in
        `stream`."""
        url = self._models_url
        try:
            response = await self._client.get(
                url, params=self._models_params, headers=self._headers, timeout=self._timeout
            )
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
                provider=self.name,
            ) from None

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    # -- retries and bounds -------------------------------------------------------------

    def _retrying(self, attempt: Callable[[float], AsyncGenerator[T, None]]) -> AsyncIterator[T]:
        """`attempt(deadline)` under the retry policy and the request's deadline."""
        return retry_stream(
            attempt,
            self._policy,
            self._sleep,
            timeout=self._request_timeout,
            on_retry=self._on_retry,
            provider=self.name,
        )

    def _watch(self, deadline: float) -> StreamWatch:
        return StreamWatch(self._idle_timeout, deadline)

    async def _post_stream(
        self,
        url: str,
        payload: bytes,
        deadline: float,
        events: EventReader,
        ending: Callable[[], Iterable[ModelChunk]],
    ) -> AsyncGenerator[ModelChunk, None]:
        """POST `payload` to `url` and yield what `events(response, watch)` makes of a
        successful answer's stream, then what `ending()` adds once it is read whole; a
        refusal, a stall or a passed deadline, and a transport failure all come out as
        ModelErrors."""
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
                async with aclosing(events(response, watch)) as chunks:
                    async for chunk in chunks:
                        yield chunk
        except TimeoutError:
            if watch.cause is None:
                raise
            raise self._watch_error(watch) from None
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, url) from exc
        for chunk in ending():
            yield chunk

    def _watch_error(self, watch: StreamWatch) -> ModelError:
        """What a watch that fired means (see `StreamWatch.cause`)."""
        if watch.cause == "deadline":
            return out_of_time(self._request_timeout, self.name)
        return stalled(self._idle_timeout, self.name)

    # -- errors ------------------------------------------------------------------------

    def _status_error(self, status: int, body: bytes, headers: Mapping[str, str]) -> ModelError:
        return classify_http_error(
            status,
            body.decode("utf-8", "replace"),
            headers,
            provider=self.name,
            now=self._clock(),
        )

    def _fatal(self, message: str) -> ModelError:
        return ModelError("fatal", message, provider=self.name)

    def _check_offered(self, choice: str, tools: Sequence[ToolDefinition]) -> None:
        """A tool choice naming one tool must name an offered one: said here, plainly,
        rather than in the API's own words."""
        if not any(tool.name == choice for tool in tools):
            offered = ", ".join(tool.name for tool in tools)
            raise self._fatal(
                f"tool_choice {choice!r} is neither auto/none/required nor an offered tool "
                f"({offered})"
            )

    def _event(self, data: str) -> Any:
        """One event's JSON (from a `data:` line); a line that is not JSON is malformed."""
        try:
            return json.loads(data)
        except ValueError:
            raise self._malformed(f"invalid JSON in a data line: {data[:200]!r}") from None

    def _error_in_body(self, payload: dict[str, Any], line: str) -> ModelError | None:
        """The error a JSON object sent instead of an event stream reports, if it is one."""
        return None

    async def _data_lines(
        self, response: httpx.Response, decoder: SSEDecoder
    ) -> AsyncGenerator[str, None]:
        """The `data:` payloads of a successful response's event stream, as `decoder`
        completes them; a 200 answer that is not an event stream is the ModelError
        `_not_event_stream` makes of it, at once."""
        lines = _lines(response)
        async for batch in lines:
            for at, line in enumerate(batch):
                try:
                    data = decoder.feed(line)
                except NotEventStream as exc:
                    rest = _rest(batch[at + 1 :], lines)
                    raise await self._not_event_stream(exc.line, rest, response) from None
                if data is not None:
                    yield data

    async def _drain(self, lines: AsyncIterator[str]) -> None:
        """Read what is left of a whole answer's body (usually just the chunked
        encoding's last empty chunk), so httpx hands the connection back to the pool
        instead of closing it with unread bytes: every model call of a process then
        shares one connection, not a TCP (and TLS) handshake each. Bounded by
        `_DRAIN_SECONDS`; whatever goes wrong here no longer matters to the answer."""
        try:
            async with asyncio.timeout(_DRAIN_SECONDS):
                async for _ in lines:
                    pass
        except (TimeoutError, httpx.HTTPError, ModelError):
            return

    async def _not_event_stream(
        self, line: str, lines: AsyncIterator[str], response: httpx.Response
    ) -> ModelError:
        """A 200 answer that is not server-sent events (a proxy's HTML page, a JSON error
        body): fatal at once, since sending the request again gets the same page, with
        what the server said (the JSON error's message, the page's title or first line).
        """
        body = [line]
        size = len(line)
        async for more in lines:
            body.append(more)
            size += len(more)
            if len(body) >= _NOT_SSE_LINES or size >= _NOT_SSE_CHARS:
                break
        text = "\n".join(body)
        content_type = response.headers.get("content-type", "none")
        if text.lstrip().startswith(("{", "[")):
            try:
                payload = json.loads(text)
            except ValueError:
                payload = None
            if isinstance(payload, dict):
                error = self._error_in_body(payload, text)
                if error is not None:
                    return _non_retryable(error)
        said = _what_it_said(text)
        reason = f"not an event stream ({content_type}): {said}"
        return ProviderError(
            "fatal",
            f"the server answered HTTP {response.status_code} but {reason}",
            reason=reason,
            status=response.status_code,
            provider=self.name,
        )

    def _malformed(self, detail: str) -> ModelError:
        return ModelError("retryable", f"malformed stream: {detail}", provider=self.name)

    def _transport_error(self, exc: httpx.HTTPError, url: str) -> ModelError:
        return classify_transport_error(
            exc,
            url,
            connect_timeout=self._connect_timeout,
            idle_timeout=self._idle_timeout,
            provider=self.name,
        )


def check_endpoint(
    base_url: str,
    timeout: float,
    connect_timeout: float | None = None,
    idle_timeout: float | None = None,
) -> str:
    """The API root, once `base_url` and the timeouts are known to be usable."""
    if not base_url.startswith(("http://", "https://")):
        raise ValueError(f"base_url must be an http:// or https:// URL, got {base_url!r}")
    for name, value in (
        ("timeout", timeout),
        ("connect_timeout", connect_timeout),
        ("idle_timeout", idle_timeout),
    ):
        if value is not None and not value > 0:
            raise ValueError(f"{name} must be > 0 seconds, got {value}")
    return base_url.rstrip("/")


def _positive(value: float | None, default: float) -> float:
    return default if value is None else value


def _non_retryable(error: ModelError) -> ModelError:
    """An error a JSON body reported in place of a stream: its kind, unless that says
    "try again" (an answer that is not a stream will not become one)."""
    kind = "fatal" if error.kind in RETRYABLE_KINDS else error.kind
    message = error.message
    if len(message) > _SAID_CHARS:
        message = message[: _SAID_CHARS - 1] + "…"
    return ModelError(kind, message, status=error.status, provider=error.provider)


def _what_it_said(text: str) -> str:
    """A page's title, else its first line with text, on one line and cut short."""
    found = _TITLE.search(text)
    said = found.group(1) if found else ""
    if not said.strip():
        said = next((ln for ln in text.splitlines() if _TAG.sub("", ln).strip()), text)
    said = " ".join(_TAG.sub(" ", said).split()) or " ".join(text.split())
    return said if len(said) <= _SAID_CHARS else said[: _SAID_CHARS - 1] + "…"


async def _lines(response: httpx.Response) -> AsyncGenerator[list[str], None]:
    """The body's lines, a batch per network read. Read raw (no decoder layer) unless the
    server compressed the body or it was read already."""
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    raw = encoding in ("identity", "") and not response.is_stream_consumed
    # A body already in memory (a test's canned response) is served by aiter_bytes.
    reads = response.aiter_raw() if raw else response.aiter_bytes()
    splitter = LineSplitter()
    async for data in reads:
        batch = splitter.feed(data)
        if batch:
            yield batch
    last = splitter.flush()
    if last:
        yield last


async def _rest(batch: list[str], batches: AsyncIterator[list[str]]) -> AsyncGenerator[str, None]:
    """One line at a time: what is left of this batch, then the batches after it."""
    for line in batch:
        yield line
    async for later in batches:
        for line in later:
            yield line


def json_body(body: Mapping[str, Any]) -> bytes:
    """The request body as compact UTF-8 JSON (non-ASCII text kept as is, not escaped)."""
    return json.dumps(
        body, ensure_ascii=False, separators=(",", ":"), default=_mapping_to_dict
    ).encode()


def tool_name(tool: ToolDefinition) -> str:
    """The sort key that keeps the offered tools, and so the cached prompt prefix, stable."""
    return tool.name


def _mapping_to_dict(value: object) -> dict[str, Any]:
    """Tool schemas are typed `Mapping`: read-only views must still serialise."""
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"cannot send {type(value).__name__} to the model: not JSON")


def default_client(base_url: str, timeout: httpx.Timeout | None = None) -> httpx.AsyncClient:
    """A client that reads no environment (proxy variables included: services never do;
    wiring injects a configured client when a proxy is needed). Every request passes its
    own timeouts, so one client (one connection pool) can serve every provider that talks
    to `base_url`.

    A plain-http endpoint (a local proxy, llama.cpp, vLLM or Ollama) never speaks TLS,
    since redirects are not followed, so it gets `LeanTransport` (HTTP/1.1 straight over
    asyncio: a streamed answer costs a fraction of the CPU, and no CA bundle is loaded).
    An https endpoint gets httpx's own transport, offered HTTP/2 (agreed in the TLS
    handshake, so a server without it answers in HTTP/1.1) when `h2` is installed.
    """
    timeout = timeout or httpx.Timeout(DEFAULT_TIMEOUT, connect=DEFAULT_CONNECT_TIMEOUT)
    if base_url.startswith("http://"):
        return httpx.AsyncClient(timeout=timeout, trust_env=False, transport=LeanTransport())
    return httpx.AsyncClient(timeout=timeout, trust_env=False, http2=find_spec("h2") is not None)
