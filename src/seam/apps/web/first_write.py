"""An event stream's response head, encoded once and written with its first event.

A thousand browsers reconnecting at once each wait for their stream's first event (the
`retry:` line). uvicorn writes a response head as soon as the app sends
`http.response.start`: it checks every header against two regexes, builds the lines and
calls `transport.write`, a `send` syscall of its own; the first event is a second write,
a second segment for the browser to read. For a head that never changes that is work
done a thousand times over.

`PrebuiltHead` is a header tuple whose lines are checked and encoded once, when it is
made (the event stream's headers, `event_streams.py`). The httptools protocol's request
cycle (`CoalescingCycle`, given to each request by `slow_clients.py`) holds such a head
back and writes it with the next body chunk, in one write: the same bytes, one syscall
and one segment fewer. Any other head, and any case the hold does not fit (no keep-alive,
`HEAD`, an access log to print, the writes paused), takes uvicorn's own path unchanged.
"""

from __future__ import annotations

import re
from typing import Any

Headers = tuple[tuple[bytes, bytes], ...]
# Headers that change how uvicorn frames the body: a prebuilt head never carries them.
_FRAMING = frozenset({b"content-length", b"transfer-encoding", b"connection"})
# What uvicorn refuses in a header's name and value (its `HEADER_RE`, `HEADER_VALUE_RE`).
_BAD_NAME = re.compile(b'[\x00-\x1f\x7f()<>@,;:\\[\\]={} \t\\\\"]')
_BAD_VALUE = re.compile(b"[\x00-\x08\x0a-\x1f\x7f]")


class PrebuiltHead(tuple[tuple[bytes, bytes], ...]):
    """Response headers (a tuple, as any ASGI server reads them) with their HTTP/1.1 lines
    encoded once in `lines`, checked as uvicorn checks each header it writes."""

    lines: bytes

    def __new__(cls, headers: Headers) -> PrebuiltHead:
        self = super().__new__(cls, headers)
        self.lines = encode_lines(self)
        return self


def encode_lines(headers: Headers) -> bytes:
    """The header lines uvicorn would write for `headers` (names lower-cased); ValueError
    for a header it would refuse or one that frames the body."""
    lines = []
    for name, value in headers:
        name = name.lower()
        if _BAD_NAME.search(name) or _BAD_VALUE.search(value) or name in _FRAMING:
            raise ValueError(f"not a header a prebuilt head may carry: {name!r}")
        lines.append(b"%s: %s\r\n" % (name, value))
    return b"".join(lines)


def coalescing_cycle(base: type[Any]) -> type[Any]:
    """uvicorn's httptools `RequestResponseCycle` (`base`), holding a `PrebuiltHead` back
    for the first body chunk (see the module docstring)."""
    from uvicorn.protocols.http.httptools_impl import STATUS_LINE

    class CoalescingCycle(base):  # type: ignore[misc]
        # The head waiting for the first chunk, encoded (None: none waits).
        _held: bytes | None = None

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
            await super().send(message)

        def _may_hold(self, message: Any) -> bool:
            return (
                message["type"] == "http.response.start"
                and type(message.get("headers")) is PrebuiltHead
                and message["status"] in STATUS_LINE
                and self.keep_alive
                and not self.access_log
                and self.scope["method"] != "HEAD"
                and not self.flow.write_paused
                and not self.disconnected
            )

        def _hold(self, status: int, headers: PrebuiltHead) -> None:
            """What uvicorn's `send` records for a chunked response it has started, and
            the head it would have written: its status line, its default headers (the
            date, the server), these headers, then chunked framing."""
            self.response_started = True
            self.waiting_for_100_continue = False
            self.chunked_encoding = True
            self.expected_content_length = 0
            self._held = b"%s%s%stransfer-encoding: chunked\r\n\r\n" % (
                STATUS_LINE[status],
                b"".join(b"%s: %s\r\n" % (n.lower(), v) for n, v in self.default_headers),
                headers.lines,
            )

    return CoalescingCycle


__all__ = ["PrebuiltHead", "coalescing_cycle", "encode_lines"]
