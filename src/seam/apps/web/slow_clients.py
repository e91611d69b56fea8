"""Connections that hold a slot without asking anything are closed.

uvicorn closes a connection idle after a response (`timeout_keep_alive`), but it has no
limit on how long a request's head may take: a client that sends a header byte now and
then (slowloris) keeps its connection, and enough of them keep the server's. These
protocols arm a timer whenever the server waits for a request head (a new connection,
or after each response) and close the connection if the head is not complete in time;
a head that is complete disarms it, so long bodies and event streams are not cut.

Two parsers, as uvicorn's `http="auto"` has: httptools (C) when it is installed, h11
(pure Python) otherwise. httptools parses a request head in about half the CPU, which
a server opening a thousand event streams at once feels; its requests also run
`seam serve`'s own cycle (`cycle.py`).
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from seam.apps.web.cycle import WHEN_GONE, serve_cycle

# Seconds a request head may take (`[web] header_timeout_seconds` sets it per server).
DEFAULT_HEADER_TIMEOUT = 10.0


class _HeadDeadline(asyncio.Protocol):
    """The timer both protocols share (a mixin ahead of uvicorn's protocol): armed when a
    connection is made, disarmed when it is lost; each protocol says when a head is in and
    when one is awaited again."""

    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    _head_timer: asyncio.TimerHandle | None = None
    transport: asyncio.Transport

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_timer()
        super().connection_lost(exc)

    def _arm_head_timer(self) -> None:
        self._disarm_head_timer()
        # (the running loop, not `self.loop`: the surfaces never name a `.loop`)
        loop = asyncio.get_running_loop()
        self._head_timer = loop.call_later(self.header_timeout, self._head_too_slow)

    def _disarm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_too_slow(self) -> None:
        self._head_timer = None
        if self._awaiting_head() and not self.transport.is_closing():
            self.transport.close()

    def _awaiting_head(self) -> bool:
        raise NotImplementedError


class HeadTimeoutProtocol(_HeadDeadline, H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request head."""

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm_head_timer()  # the head is in: the request runs its course

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._arm_head_timer()

    def _awaiting_head(self) -> bool:
        return self.conn.their_state is h11.IDLE


def _httptools_protocol() -> type[_HeadDeadline] | None:
    """uvicorn's httptools protocol with a deadline for each request head, or None when
    httptools is not installed."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle
    except ImportError:
        return None
    cycle = serve_cycle(RequestResponseCycle)

    class HttpToolsHeadTimeoutProtocol(_HeadDeadline, HttpToolsProtocol):
        def on_headers_complete(self) -> None:
            self._disarm_head_timer()  # the head is in: the request runs its course
            super().on_headers_complete()
            # The request's cycle is `seam serve`'s (`cycle.py`): same layout, so its
            # class is swapped, nothing copied.
            served: Any = self.cycle
            if type(served) is RequestResponseCycle:
                served.__class__ = cycle
                self.scope[WHEN_GONE] = served.when_gone  # type: ignore[attr-defined,literal-required]

        def connection_lost(self, exc: Exception | None) -> None:
            super().connection_lost(exc)
            served: Any = self.cycle
            if type(served) is cycle:
                served.gone()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            # A pipelined request already in has had its head; otherwise one is awaited.
            if not self.transport.is_closing() and not self.pipeline:
                self._arm_head_timer()

        def _awaiting_head(self) -> bool:
            return self.cycle is None or self.cycle.response_complete

    return HttpToolsHeadTimeoutProtocol


HTTPTOOLS_PROTOCOL = _httptools_protocol()


def head_timeout_protocol(seconds: float, *, parser: str = "auto") -> type[_HeadDeadline]:
    """The protocol class for one server, with its own deadline (uvicorn builds the
    protocol from a class, so the setting rides on a subclass). `parser`: "auto"
    (httptools when installed), "httptools" or "h11"."""
    base: type[_HeadDeadline] = HeadTimeoutProtocol
    if parser != "h11" and HTTPTOOLS_PROTOCOL is not None:
        base = HTTPTOOLS_PROTOCOL
    elif parser == "httptools":
        raise ValueError("httptools is not installed")
    return type(base.__name__, (base,), {"header_timeout": seconds})


__all__ = ["DEFAULT_HEADER_TIMEOUT", "HeadTimeoutProtocol", "head_timeout_protocol"]
