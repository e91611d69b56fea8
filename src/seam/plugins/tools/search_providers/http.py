"""What every HTTP search provider shares: one pooled client per provider per process,
a deadline on the whole request, a cap on the body, and one-line errors that never hold
the key.

The provider's own URL is the owner's configuration, not the model's choice, so it is not
put through the address guard: a SearXNG instance on the owner's own network is a normal
set-up. What the provider returns is another matter (see `web_search.py`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import httpx

from seam.plugins.tools.search_providers import SearchFailed, SearchHit

MAX_BODY = 2_000_000  # bytes of one answer read, at most
SAID_CHARS = 160  # of an error body shown in the message
USER_AGENT = "seam-web-search/1"
_HINTS = {
    401: "check the API key",
    403: "check the API key (a SearXNG instance must list json in search.formats)",
    429: "rate limited; try again later",
}


class _Answer(NamedTuple):
    status: int
    reason: str
    body: bytes
    location: str  # where a redirect points ("" when none)


class HttpSearch:
    """Base of a provider that answers JSON over HTTP. `secret` (the API key) is scrubbed
    from every message; `headers` go with every request."""

    name = "search"

    def __init__(
        self, base_url: str, *, timeout: float, headers: Mapping[str, str], secret: str = ""
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"url must be an http:// or https:// URL, got {base_url!r}")
        self._base = base_url.rstrip("/")
        self._timeout = timeout
        self._headers = {"User-Agent": USER_AGENT, "Accept": "application/json", **headers}
        self._secret = secret
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _pooled(self) -> httpx.AsyncClient:
        """The one client (and connection pool) of this provider in this event loop: made
        on the first search, kept for the next (a client cannot outlive its loop)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            # trust_env=False: no proxy or .netrc picked up from the environment.
            self._client = httpx.AsyncClient(
                timeout=self._timeout, trust_env=False, follow_redirects=False
            )
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def _call(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str | int] | None = None,
        body: Mapping[str, Any] | None = None,
    ) -> Any:
        """The answer's JSON, or `SearchFailed` saying in one line what went wrong."""
        url = self._base + path
        try:
            async with asyncio.timeout(self._timeout):
                answer = await self._send(method, url, params, body)
        except TimeoutError:
            raise SearchFailed(f"{self.name} did not answer within {self._timeout:g} s") from None
        except (httpx.HTTPError, httpx.InvalidURL, UnicodeError) as exc:  # Unicode: a bad key
            raise SearchFailed(self._scrub(f"could not reach {self.name}: {_what(exc)}")) from None
        if not 200 <= answer.status < 300:
            raise SearchFailed(self._status(answer))
        try:
            return json.loads(answer.body)
        except ValueError:
            raise SearchFailed(f"{self.name} answered with something that is not JSON") from None

    async def _send(
        self,
        method: str,
        url: str,
        params: Mapping[str, str | int] | None,
        body: Mapping[str, Any] | None,
    ) -> _Answer:
        request = self._pooled().build_request(
            method, url, params=params, json=body, headers=self._headers
        )
        response = await self._pooled().send(request, stream=True)
        try:
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_BODY:
                    raise SearchFailed(f"{self.name} answered with more than {MAX_BODY:,} bytes")
            location = response.headers.get("location", "")
            return _Answer(response.status_code, response.reason_phrase, b"".join(chunks), location)
        finally:
            await response.aclose()

    def _status(self, answer: _Answer) -> str:
        """One line: the status, what to do about it, and the start of what it said."""
        said = " ".join(answer.body[:2000].decode("utf-8", "replace").split())
        said = "".join(c for c in said if c.isprintable())[:SAID_CHARS]
        hint = _HINTS.get(answer.status, "")
        if 300 <= answer.status < 400:
            # Not followed: a redirect could carry the key's header to another host.
            where = "".join(c for c in answer.location[:200] if c.isprintable())
            hint = f"redirects are not followed; set url to where it points: {where}"
        parts = [f"{self.name} answered HTTP {answer.status} {answer.reason}".rstrip()]
        if hint:
            parts.append(f"({hint})")
        if said:
            parts.append(f": {said}")
        return self._scrub(" ".join(parts).replace(" :", ":"))

    def _scrub(self, message: str) -> str:
        """`message` without the key, should a server or a URL have echoed it."""
        return message.replace(self._secret, "[key]") if self._secret else message


def hits_from(items: object, title: str, url: str, snippet: str, provider: str) -> list[SearchHit]:
    """The hits in a provider's result list (`items`), read by its field names; items
    that are not objects, or have no URL, are skipped."""
    if not isinstance(items, Sequence) or isinstance(items, str | bytes):
        raise SearchFailed(f"{provider} answered JSON without a list of results")
    hits = []
    for item in items:
        if isinstance(item, Mapping) and isinstance(item.get(url), str) and item[url]:
            hits.append(SearchHit(_text(item.get(title)), str(item[url]), _text(item.get(snippet))))
    return hits


def lookup(data: object, *path: str) -> object:
    """`data[path[0]][path[1]]...`, or None where a step is missing or not an object."""
    for key in path:
        if not isinstance(data, Mapping):
            return None
        data = data.get(key)
    return data


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _what(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
