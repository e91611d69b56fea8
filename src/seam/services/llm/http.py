"""What every streaming HTTP model provider shares, whatever its wire format.

Endpoint and timeout checks, client ownership, headers, retry settings, the model list
and the turning of failed responses and transport errors into `ModelError`s are the same
for every API; only the request body and the stream's events differ, and those stay in
the provider that speaks them.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import httpx

from seam.contracts.model import ModelCapabilities, ModelError, ToolDefinition
from seam.services.llm.retry import (
    RetryPolicy,
    Sleep,
    classify_http_error,
    classify_transport_error,
)


class HttpProvider:
    """The ModelProvider plumbing around one HTTP API; subclasses add `stream`.

    A subclass checks its arguments (`check_endpoint` first) before calling `__init__`,
    so a bad one is reported before a client, and its CA bundle, is made.
    """

    _capabilities: ClassVar[ModelCapabilities] = ModelCapabilities(tools=True, streaming=True)
    # Query parameters for the model list (Anthropic pages it; OpenAI-style servers don't).
    _models_params: ClassVar[Mapping[str, Any] | None] = None

    def __init__(
        self,
        *,
        base_url: str,
        models_url: str,
        headers: dict[str, str],
        name: str,
        model: str,
        max_context_tokens: int,
        timeout: float,
        max_retries: int,
        backoff_base: float,
        backoff_max: float,
        client: httpx.AsyncClient | None,
        sleep: Sleep,
        clock: Callable[[], float],
    ) -> None:
        """`base_url` is the API root without its trailing slash; `headers` go with
        every request (authentication, API version)."""
        self._models_url = models_url
        self._name = name
        self._model = model
        self._max_context_tokens = max_context_tokens
        self._timeout = httpx.Timeout(timeout)
        self._policy = RetryPolicy(max_retries, backoff_base, backoff_max)
        self._sleep = sleep
        self._clock = clock
        self._headers = headers
        self._stream_headers = {
            **headers,
            "Content-Type": "application/json",
            "Accept": "text/event-stream",
        }
        self._owns_client = client is None
        self._client = client or _default_client(base_url, self._timeout)

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
        return self._capabilities

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
                provider=self._name,
            ) from None

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    # -- errors ------------------------------------------------------------------------

    def _status_error(self, status: int, body: bytes, headers: Mapping[str, str]) -> ModelError:
        return classify_http_error(
            status,
            body.decode("utf-8", "replace"),
            headers,
            provider=self._name,
            now=self._clock(),
        )

    def _fatal(self, message: str) -> ModelError:
        return ModelError("fatal", message, provider=self._name)

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

    def _not_event_stream(self, line: str, response: httpx.Response) -> ModelError:
        if line.startswith("{"):
            try:
                payload = json.loads(line)
            except ValueError:
                payload = None
            if isinstance(payload, dict):
                error = self._error_in_body(payload, line)
                if error is not None:
                    return error
        content_type = response.headers.get("content-type", "none")
        return self._malformed(
            f"the response is not server-sent events (content-type {content_type}): {line[:200]!r}"
        )

    def _malformed(self, detail: str) -> ModelError:
        return ModelError("retryable", f"malformed stream: {detail}", provider=self._name)

    def _transport_error(self, exc: httpx.HTTPError, url: str) -> ModelError:
        return classify_transport_error(exc, url, timeout=self._timeout.read, provider=self._name)


def check_endpoint(base_url: str, timeout: float) -> str:
    """The API root, once `base_url` and `timeout` are known to be usable."""
    if not base_url.startswith(("http://", "https://")):
        raise ValueError(f"base_url must be an http:// or https:// URL, got {base_url!r}")
    if timeout <= 0:
        raise ValueError(f"timeout must be > 0 seconds, got {timeout}")
    return base_url.rstrip("/")


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


def _default_client(base_url: str, timeout: httpx.Timeout) -> httpx.AsyncClient:
    """A client that reads no environment (proxy variables included: services never do;
    wiring injects a configured client when a proxy is needed).

    A plain-http endpoint (a local proxy, llama.cpp, vLLM or Ollama) never speaks TLS,
    since redirects are not followed, so it gets an empty TLS context instead of the CA
    bundle, which takes tens of milliseconds to load; any TLS attempt with it fails
    verification.
    """
    verify: ssl.SSLContext | bool = True
    if base_url.startswith("http://"):
        verify = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    return httpx.AsyncClient(timeout=timeout, trust_env=False, verify=verify)
