"""Incremental server-sent-events decoding, one line at a time.

A push decoder (feed a line, maybe get an event's data back) rather than a generator
layer, so the streaming hot path pays one method call per line. Comments (`: keep-alive`,
OpenRouter's `: OPENROUTER PROCESSING`), `event`, `id` and `retry` lines are accepted and
ignored. Any other line means the body is not an event stream at all (a proxy's HTML
page, a plain JSON body), which the caller must hear about instead of getting nothing.
"""

from __future__ import annotations

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
