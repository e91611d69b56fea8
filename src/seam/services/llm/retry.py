"""Error classification and jittered retry, shared by model providers.

Classification lives in one function so every HTTP provider turns the same status, body
and headers into the same `ModelError` kind, and the caller never string-matches. The
retry loop is separate and knows nothing of HTTP, so an in-process provider can reuse it
with errors of its own.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import random
import socket
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from contextlib import aclosing
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TypeVar

import httpx

from seam.contracts.model import ErrorKind, ModelError, OnRetry, RetryNotice

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]

_log = logging.getLogger(__name__)

# Phrases servers use when the prompt does not fit (OpenAI, vLLM, llama.cpp, Groq,
# OpenRouter, Anthropic-compatible proxies). Matched against the lower-cased body.
_CONTEXT_MARKERS = (
    "context_length_exceeded",
    "context length",
    "context_length",
    "context window",
    "context size",
    "too many tokens",
    "prompt is too long",
    "input is too long",
    "reduce the length",
)
_REFUSAL_MARKERS = (
    "content_policy",
    "content policy",
    "content_filter",
    "content management policy",
    "safety system",
    "responsibleaipolicyviolation",
)
# Anthropic reports an empty prepaid balance as a plain 400 invalid_request_error.
_BILLING_MARKERS = ("credit balance is too low",)
# The `error.type` of an error a server sends inside a stream, where there is no status
# to go by (Anthropic's `error` event; OpenAI-style types share the names).
_STREAM_ERROR_TYPES: dict[str, ErrorKind] = {
    "overloaded_error": "retryable",
    "api_error": "retryable",
    "timeout_error": "retryable",
    "rate_limit_error": "rate_limited",
    "authentication_error": "auth",
    "permission_error": "auth",
    "billing_error": "billing",
    "invalid_request_error": "fatal",
    "not_found_error": "fatal",
}
_MAX_MESSAGE = 500
_MAX_REASON = 120


class ProviderError(ModelError):
    """A `ModelError` that also knows its short `reason`, for retry lines
    ("connection refused") where the full message names the URL and the details."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        reason: str,
        status: int | None = None,
        provider: str = "",
    ) -> None:
        super().__init__(kind, message, status=status, provider=provider)
        self.reason = reason


class Stalled(ProviderError):
    """The server stopped sending (no event for the idle limit) or the request ran out of
    time. Kind `retryable`, so a fallback provider is tried and a worker may run the
    submission again later, but it is never repeated at once against the same server:
    one that hung on this request is likely to hang again, and each try costs the whole
    idle limit while a person waits."""


def retry_reason(error: ModelError) -> str:
    """The short reason of a failure: what a retry line says after the colon."""
    if isinstance(error, ProviderError):
        return error.reason
    message = " ".join(error.message.split())
    if error.status and not message.startswith(f"HTTP {error.status}"):
        message = f"HTTP {error.status}: {message}"
    return message if len(message) <= _MAX_REASON else message[: _MAX_REASON - 1] + "…"


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to wait: exponential backoff with jitter, capped.

    The jitter (the second half of each window, at random) spreads clients that failed
    together (one overloaded server) instead of having them all return at the same
    instant; the fixed first half keeps a retry from coming back at once, when a server
    that just refused the connection has had no time to come up.
    """

    max_retries: int = 3
    backoff_base: float = 0.5
    backoff_max: float = 30.0

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries}")
        if self.backoff_base < 0 or self.backoff_max < 0:
            raise ValueError(
                f"backoff_base and backoff_max must be >= 0, got {self.backoff_base} "
                f"and {self.backoff_max}"
            )

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number `retry` (0 for the first retry).

        A server that says when to come back knows better than any formula, so its
        `retry_after` wins, capped so a hostile or buggy header cannot park us for hours.
        """
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.backoff_max)
        window = min(self.backoff_max, self.backoff_base * 2**retry)
        return random.uniform(window / 2, window)


async def retry_stream(
    attempt: Callable[[float], AsyncGenerator[T, None]],
    policy: RetryPolicy,
    sleep: Sleep,
    *,
    timeout: float,  # noqa: ASYNC109 (a deadline for every attempt, not a wait of its own)
    on_retry: OnRetry | None = None,
    provider: str = "",
) -> AsyncGenerator[T, None]:
    """Yield from a fresh `attempt(deadline)` until one completes, retrying retryable
    `ModelError`s.

    `deadline` is loop time `timeout` seconds after the first attempt began: every
    attempt must be done by then, and no retry starts whose back-off would end past it.
    Retries happen only while the failed attempt has yielded nothing: once an item has
    reached the caller, starting over would repeat it (text shown twice, a tool call
    announced twice), so from then on every error is the caller's to handle. A `Stalled`
    server is not asked again (see `Stalled`). `on_retry` hears of each retry before its
    back-off.
    """
    clock = asyncio.get_running_loop().time
    deadline = clock() + timeout
    retries = 0
    while True:
        produced = False
        try:
            async with aclosing(attempt(deadline)) as items:
                async for item in items:
                    produced = True
                    yield item
            return
        except ModelError as error:
            if (
                produced
                or not error.retryable
                or isinstance(error, Stalled)
                or retries >= policy.max_retries
            ):
                raise
            delay = policy.delay(retries, error.retry_after)
            if clock() + delay >= deadline:
                raise
            _log.info("%s; retry %d of %d in %.2fs", error, retries + 1, policy.max_retries, delay)
            if on_retry is not None:
                on_retry(
                    RetryNotice(
                        retries + 2, policy.max_retries + 1, delay, retry_reason(error), provider
                    )
                )
        retries += 1
        await sleep(delay)


def classify_http_error(
    status: int | None,
    body: str,
    headers: Mapping[str, str],
    *,
    provider: str,
    now: float,
) -> ModelError:
    """Turn a failed response into a `ModelError` whose kind tells the caller what to do.

    `status` is None for an error a server reported inside an otherwise successful
    stream; it is treated as a server-side failure unless the body says otherwise.
    `headers` must look names up case-insensitively (httpx.Headers does) or use lower-case
    keys. `now` (epoch seconds) dates a `Retry-After` given as an HTTP-date when the
    response carries no `Date` of its own.
    """
    message = error_message(body) or f"HTTP {status}"
    lowered = body.lower()
    retry_after = parse_retry_after(headers, now)

    def error(kind: ErrorKind) -> ModelError:
        return ModelError(kind, message, status=status, retry_after=retry_after, provider=provider)

    if status == 429:
        # OpenAI reports an exhausted quota as 429 too; waiting will not refill it.
        return error("billing" if "insufficient_quota" in lowered else "rate_limited")
    if status in (401, 403):
        return error("auth")
    if status == 402:
        return error("billing")
    if status in (400, None) and any(m in lowered for m in _BILLING_MARKERS):
        return error("billing")
    if status in (400, 413, None) and any(m in lowered for m in _CONTEXT_MARKERS):
        return error("context_overflow")
    if status in (400, None) and any(m in lowered for m in _REFUSAL_MARKERS):
        return error("refused")
    if status is None:
        return error(_STREAM_ERROR_TYPES.get(error_type(body) or "", "retryable"))
    # 408 is the server giving up on a slow request; 501 is a permanent "not supported".
    if status == 408 or (status >= 500 and status != 501):
        return error("retryable")
    return error("fatal")


def error_message(body: str) -> str:
    """The human-readable part of an error body, in the shapes servers actually send.

    `{"error": {"message": ...}}` (OpenAI), `{"error": "..."}` (Ollama), `{"message":
    ...}` (vLLM), `{"detail": ...}` (FastAPI), with OpenRouter's upstream detail in
    `error.metadata.raw` appended; anything else is the body itself, shortened.
    """
    try:
        payload = json.loads(body)
    except ValueError:
        return body.strip()[:_MAX_MESSAGE]
    if not isinstance(payload, dict):
        return body.strip()[:_MAX_MESSAGE]
    error = payload.get("error", payload)
    if isinstance(error, str):
        return error[:_MAX_MESSAGE]
    if isinstance(error, dict):
        message = error.get("message") or error.get("detail")
        if isinstance(message, str) and message:
            metadata = error.get("metadata")
            raw = metadata.get("raw") if isinstance(metadata, dict) else None
            if isinstance(raw, str) and raw:
                message = f"{message}: {raw}"
            return message[:_MAX_MESSAGE]
    return body.strip()[:_MAX_MESSAGE]


def error_type(body: str) -> str | None:
    """The machine-readable `error.type` of a JSON error body, when it has one."""
    try:
        payload = json.loads(body)
    except ValueError:
        return None
    error = payload.get("error") if isinstance(payload, dict) else None
    kind = error.get("type") if isinstance(error, dict) else None
    return kind if isinstance(kind, str) else None


def classify_transport_error(
    exc: httpx.HTTPError,
    url: str,
    *,
    connect_timeout: float | None,
    idle_timeout: float | None,
    provider: str,
) -> ModelError:
    """Turn an httpx failure (no usable response) into a `ModelError`.

    Connection failures and dropped streams are retryable; a read timeout is a `Stalled`
    server; a URL the client cannot send to at all is fatal. The timeouts are only
    quoted in the message.
    """

    def retryable(reason: str, detail: str) -> ModelError:
        return ProviderError("retryable", f"{reason} ({detail})", reason=reason, provider=provider)

    if isinstance(exc, httpx.ConnectTimeout):
        return retryable(f"connect timed out after {connect_timeout:g} s", url)
    if isinstance(exc, httpx.ReadTimeout):
        return stalled(idle_timeout, provider)
    if isinstance(exc, httpx.TimeoutException):
        return retryable("timed out sending the request", url)
    if isinstance(exc, httpx.ConnectError):
        reason = _connect_failure(exc)
        return retryable(reason, url if reason != "cannot connect" else f"{url}: {exc}")
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.LocalProtocolError):
        return ModelError("fatal", f"cannot send to {url}: {exc}", provider=provider)
    if isinstance(exc, httpx.TransportError):
        return retryable("connection lost", f"{url}: {exc}")
    if isinstance(exc, httpx.DecodingError):
        return retryable("malformed stream", f"cannot decode the body: {exc}")
    return ModelError("fatal", f"request to {url} failed: {exc}", provider=provider)


def stalled(idle_timeout: float | None, provider: str) -> Stalled:
    reason = f"no event from the server for {idle_timeout:g} s"
    return Stalled("retryable", f"stream stalled: {reason}", reason=reason, provider=provider)


def out_of_time(timeout: float, provider: str) -> Stalled:
    reason = f"no complete answer within {timeout:g} s"
    return Stalled("retryable", f"timed out: {reason}", reason=reason, provider=provider)


def _connect_failure(exc: BaseException) -> str:
    """ "connection refused", "cannot resolve the host" or "cannot connect", from the
    OS error somewhere in the exception's chain."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError) or getattr(seen, "errno", None) == (
            errno.ECONNREFUSED
        ):
            return "connection refused"
        if isinstance(seen, socket.gaierror):
            return "cannot resolve the host"
        seen = seen.__cause__ or seen.__context__
    text = str(exc).lower()
    if "connection refused" in text:
        return "connection refused"
    if "name or service not known" in text or "name resolution" in text:
        return "cannot resolve the host"
    return "cannot connect"


def parse_retry_after(headers: Mapping[str, str], now: float) -> float | None:
    """Seconds to wait, from `retry-after-ms` or `Retry-After` (seconds or an HTTP-date).

    An HTTP-date is measured against the response's own `Date` header when there is one,
    so a skewed local clock does not distort it; `now` is the fallback.
    """
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(float(millis) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    when = _http_date(value)
    if when is None:
        return None
    reference = _http_date(headers.get("date") or "")
    return max(when - (now if reference is None else reference), 0.0)


def _http_date(value: str) -> float | None:
    try:
        return parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None
