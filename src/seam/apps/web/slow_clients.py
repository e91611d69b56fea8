"""Connections that hold a slot without asking anything are closed.

uvicorn closes a connection idle after a response (`timeout_keep_alive`), but it has no
limit on how long a request's head may take: a client that sends a header byte now and
then (slowloris) keeps its connection, and enough of them keep the server's. This
protocol arms a timer whenever the server waits for a request head (a new connection,
or after each response) and closes the connection if the head is not complete in time;
a head that is complete disarms it, so long bodies and event streams are not cut.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

# Seconds a request head may take (`[web] header_timeout_seconds` sets it per server).
DEFAULT_HEADER_TIMEOUT = 10.0


class HeadTimeoutProtocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request head."""

    header_timeout: float = DEFAULT_HEADER_TIMEOUT

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm_head_timer()  # the head is in: the request runs its course

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._arm_head_timer()

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
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def head_timeout_protocol(seconds: float) -> type[HeadTimeoutProtocol]:
    """The protocol class for one server, with its own deadline (uvicorn builds the
    protocol from a class, so the setting rides on a subclass)."""
    return type("HeadTimeoutProtocol", (HeadTimeoutProtocol,), {"header_timeout": seconds})


__all__ = ["DEFAULT_HEADER_TIMEOUT", "HeadTimeoutProtocol", "head_timeout_protocol"]
