"""`seam serve`'s request cycle: uvicorn's httptools `RequestResponseCycle` with two
additions an event stream's opening feels when a thousand come at once.

- A `PrebuiltHead` is held back and written with the first body chunk, in one write
  (`first_write.py`).
- `WHEN_GONE`: the scope carries a way to hear that the client went away. An ASGI app
  hears it only from `receive`, so a stream used to keep a task awaiting `receive` for
  its whole life (a task, three coroutines, a future and a context each: objects the
  garbage collector walks, and the CPU to make them, at every opening). Here the
  protocol calls the stream back from `connection_lost` instead. Servers without it
  (h11, tests' ASGI transports) leave the key out, and the stream keeps its watcher.

The protocol (`slow_clients.py`) gives each request this cycle by swapping the class of
the one uvicorn made (same layout, nothing copied).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from seam.apps.web.first_write import PrebuiltHead

# Scope key: `when_gone(callback)` calls `callback()` once, when the client goes away
# before the response ends (at once if it has gone already).
WHEN_GONE = "seam.when_gone"


class _ServeCycle:
    """The additions, ahead of uvicorn's cycle in the class `serve_cycle` makes (their
    `super()` is uvicorn's)."""

    # The status lines uvicorn writes, by status (set by `serve_cycle`).
    status_lines: dict[int, bytes] = {}
    # The head waiting for the first chunk, encoded (None: none waits).
    _held: bytes | None = None
    # Called when the client goes away (`when_gone`).
    _on_gone: Callable[[], None] | None = None
    # uvicorn's cycle's state, read and set here.
    disconnected: bool
    response_started: bool
    waiting_for_100_continue: bool
    chunked_encoding: bool | None
    expected_content_length: int
    keep_alive: bool
    access_log: bool
    scope: Any
    flow: Any
    transport: Any
    default_headers: list[tuple[bytes, bytes]]

    def when_gone(self, callback: Callable[[], None]) -> None:
        if self.disconnected:
            callback()
        else:
            self._on_gone = callback

    def gone(self) -> None:
        """The connection was lost: the callback hears it if the response was open."""
        callback, self._on_gone = self._on_gone, None
        if callback is not None and self.disconnected:
            callback()

    async def send(self, message: Any) -> None:
        if not self.response_started and self._may_hold(message):
            self._hold(message["status"], message["headers"])
            return
        held, self._held = self._held, None
        if held is not None and not self.disconnected:
            body = message.get("body", b"")
            if message["type"] == "http.response.body" and body and message.get("more_body"):
                self.transport.write(b"%s%x\r\n%s\r\n" % (held, len(body), body))
                return
            self.transport.write(held)
        await super().send(message)  # type: ignore[misc]

    def _may_hold(self, message: Any) -> bool:
        return (
            message["type"] == "http.response.start"
            and type(message.get("headers")) is PrebuiltHead
            and message["status"] in self.status_lines
            and self.keep_alive
            and not self.access_log
            and self.scope["method"] != "HEAD"
            and not self.flow.write_paused
            and not self.disconnected
        )

    def _hold(self, status: int, headers: PrebuiltHead) -> None:
        """What uvicorn's `send` records for a chunked response it has started, and the
        head it would have written: its status line, its default headers (the date, the
        server), these headers, then chunked framing."""
        self.response_started = True
        self.waiting_for_100_continue = False
        self.chunked_encoding = True
        self.expected_content_length = 0
        self._held = b"%s%s%stransfer-encoding: chunked\r\n\r\n" % (
            self.status_lines[status],
            b"".join(b"%s: %s\r\n" % (n.lower(), v) for n, v in self.default_headers),
            headers.lines,
        )


def serve_cycle(base: type[Any]) -> type[Any]:
    """uvicorn's httptools `RequestResponseCycle` (`base`) with the additions above."""
    from uvicorn.protocols.http.httptools_impl import STATUS_LINE

    return type("ServeCycle", (_ServeCycle, base), {"status_lines": STATUS_LINE})


__all__ = ["WHEN_GONE", "serve_cycle"]
