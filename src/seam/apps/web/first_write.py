"""An event stream's response head, encoded once and written with its first event.

A thousand browsers reconnecting at once each wait for their stream's first event (the
`retry:` line). uvicorn writes a response head as soon as the app sends
`http.response.start`: it checks every header against two regexes, builds the lines and
calls `transport.write`, a `send` syscall of its own; the first event is a second write,
a second segment for the browser to read. For a head that never changes that is work
done a thousand times over.

`PrebuiltHead` is a header tuple whose lines are checked and encoded once, when it is
made (the event stream's headers, `event_streams.py`). `seam serve`'s request cycle
(`cycle.py`) holds such a head back and writes it with the next body chunk, in one
write: the same bytes, one syscall and one segment fewer. Any other head, and any case
the hold does not fit (no keep-alive, `HEAD`, an access log to print, the writes
paused), takes uvicorn's own path unchanged.
"""

from __future__ import annotations

import re

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


__all__ = ["PrebuiltHead", "encode_lines"]
