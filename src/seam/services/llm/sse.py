"""Incremental server-sent-events decoding, one line at a time.

A push decoder (feed a line, maybe get an event's data back) rather than a generator
layer, so the streaming hot path pays one method call per line; `LineSplitter` makes the
lines from the body's bytes a network read at a time (a list per read, not a generator
step per line, which httpx's `aiter_lines` costs through four layers of generators).
Comments (`: keep-alive`, OpenRouter's `: OPENROUTER PROCESSING`), `event`, `id` and
`retry` lines are accepted and ignored. Any other line means the body is not an event
stream at all (a proxy's HTML page, a plain JSON body), which the caller must hear about
instead of getting nothing.
"""

from __future__ import annotations

import codecs

_IGNORED_FIELDS = ("event:", "id:", "retry:")
_BARE_FIELDS = frozenset({"event", "id", "retry"})


class NotEventStream(ValueError):
    """A line that is not server-sent-events syntax; `line` is the offending text."""

    def __init__(self, line: str) -> None:
        super().__init__(f"not a server-sent-events line: {line[:200]!r}")
        self.line = line


class SSEDecoder:
    """Collects `data` lines; a blank line ends the event and returns its data.

    Several `data` lines in one event are joined with newlines, as the spec says. An
    event cut off by the end of the body is discarded (also the spec), except that a
    bare `[DONE]` is honoured by `flush` because some servers omit its blank line.
    """

    __slots__ = ("_data",)

    def __init__(self) -> None:
        self._data: str | None = None

    def feed(self, line: str) -> str | None:
        """Take one line without its line ending; return the event's data when it ends."""
        if not line:
            data = self._data
            self._data = None
            return data
        if line.startswith("data:"):
            value = line[6:] if line.startswith(" ", 5) else line[5:]
            self._data = value if self._data is None else f"{self._data}\n{value}"
            return None
        if line[0] == ":" or line.startswith(_IGNORED_FIELDS) or line in _BARE_FIELDS:
            return None
        if line == "data":
            self._data = "" if self._data is None else f"{self._data}\n"
            return None
        raise NotEventStream(line)

    def flush(self) -> str | None:
        """At the end of the body: `[DONE]` if that was the unterminated last event."""
        data, self._data = self._data, None
        return data if data == "[DONE]" else None


class LineSplitter:
    """The body's bytes in, its lines out: CR, LF or CRLF end a line (the spec's three,
    and no others: a JSON string may hold U+2028, which `str.splitlines` would split
    on), UTF-8 decoded across reads. `feed` returns the lines a read completed."""

    __slots__ = ("_decode", "_pending")

    def __init__(self) -> None:
        self._decode = codecs.getincrementaldecoder("utf-8")("replace").decode
        self._pending = ""

    def feed(self, data: bytes) -> list[str]:
        text = self._pending + self._decode(data)
        held = ""
        if "\r" in text:
            if text.endswith("\r"):  # maybe the first half of a CRLF: decide next time
                text, held = text[:-1], "\r"
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        lines = text.split("\n")
        self._pending = lines.pop() + held
        return lines

    def flush(self) -> list[str]:
        """At the end of the body: the last line, if it had no line ending."""
        text = self._pending + self._decode(b"", True)
        self._pending = ""
        if text.endswith("\r"):
            text = text[:-1]
        return [text] if text else []
