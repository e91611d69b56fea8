"""HTTP/1.1 for plain-http model endpoints, straight over asyncio streams.

A local model server (llama.cpp, vLLM, Ollama, a proxy on the same machine) streams an
answer as one chunk of the chunked encoding per token. Through httpcore and h11 every such
chunk is an event that climbs half a dozen generator layers before a line is made of it,
which costs a turn several times the CPU of reading the same bytes directly. This
transport plugs into `httpx.AsyncClient` (so the client, its timeouts, its errors and
every caller stay as they are) and hands the body over a network read at a time, the
chunked encoding undone in one pass over what the read brought.

What it does not do, it leaves to httpx's own transport: TLS (an https endpoint gets
httpx, and HTTP/2 when offered), proxies, HTTP/1.0 servers that need an `Expect`. Failures
are raised as the httpx exceptions httpx's transport raises for the same failure, so
`retry.classify_transport_error` reads them alike. Connections are kept alive and reused
when a response was read to its end; one found closed by the server while idle is
replaced, and a request that got no byte back on a reused connection is sent once more on
a new one (the server closed it just as the request went out).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import httpx

from seam.services.llm.lean_body import Body, Connection, read_head

Origin = tuple[str, int]
# Idle connections kept per origin; more are closed when returned.
MAX_IDLE = 8


class LeanTransport(httpx.AsyncBaseTransport):
    """A pool of kept-alive HTTP/1.1 connections per origin (plain http only)."""

    def __init__(self) -> None:
        self._idle: dict[Origin, list[Connection]] = {}
        self._closed = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme != "http":
            raise httpx.UnsupportedProtocol(f"this transport speaks plain http, not {url}")
        timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        origin = (url.host, url.port or 80)
        message = _message(request, await request.aread())
        connection = self._reusable(origin)
        if connection is not None:
            try:
                return await self._exchange(connection, origin, message, timeouts)
            except _NothingBack:
                connection.close()  # closed by the server as the request went out
        connection = await _connect(origin, timeouts.get("connect"))
        try:
            return await self._exchange(connection, origin, message, timeouts)
        except _NothingBack as exc:
            raise httpx.RemoteProtocolError(
                "server disconnected without sending a response"
            ) from exc.__cause__

    async def aclose(self) -> None:
        self._closed = True
        for connections in self._idle.values():
            for connection in connections:
                connection.close()
        self._idle.clear()

    def _reusable(self, origin: Origin) -> Connection | None:
        idle = self._idle.get(origin)
        while idle:
            connection = idle.pop()
            if connection.usable():
                return connection
            connection.close()
        return None

    def _releaser(self, origin: Origin, connection: Connection) -> Callable[[], None]:
        """What puts `connection` back in the pool after a whole response (or closes
        it, when it cannot be kept)."""

        def release() -> None:
            idle = self._idle.setdefault(origin, [])
            if self._closed or len(idle) >= MAX_IDLE or not connection.usable():
                connection.close()
            else:
                idle.append(connection)

        return release

    async def _exchange(
        self,
        connection: Connection,
        origin: Origin,
        message: bytes,
        timeouts: dict[str, float | None],
    ) -> httpx.Response:
        """Send `message`, read the response's head; the body streams from there."""
        try:
            await connection.send(message, timeouts.get("write"))
            status, headers, reason, keep = await read_head(connection, timeouts.get("read"))
        except BaseException:
            connection.close()
            raise
        read_timeout = timeouts.get("read")
        body = Body(
            connection, status, headers, keep, read_timeout, self._releaser(origin, connection)
        )
        return httpx.Response(
            status,
            headers=headers,
            stream=body,
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": reason},
        )


class _NothingBack(Exception):
    """The connection ended before a single byte of the response came back."""


def _message(request: httpx.Request, body: bytes) -> bytes:
    """The request as one write: line, headers (httpx made them: Host, lengths, ...)."""
    lines = [b"%s %s HTTP/1.1" % (request.method.encode(), request.url.raw_path)]
    lines += [b"%s: %s" % (name, value) for name, value in request.headers.raw]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


async def _connect(origin: Origin, limit: float | None) -> Connection:
    host, port = origin
    try:
        async with asyncio.timeout(limit):
            reader, writer = await asyncio.open_connection(host, port)
    except TimeoutError as exc:
        raise httpx.ConnectTimeout(f"connecting to {host}:{port} timed out") from exc
    except OSError as exc:
        raise httpx.ConnectError(str(exc) or type(exc).__name__) from exc
    return Connection(reader, writer, _NothingBack)
