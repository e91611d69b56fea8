"""A command's output as the model sees it: head and tail within a cap, and the rest.

`Capture` keeps a foreground command's output (and, up to a larger cap, all of it for
spilling to a file); `OutputRing` keeps a background process's recent output so each
poll reads what is new.
"""

from __future__ import annotations

import codecs
from collections import deque
from collections.abc import Callable

# Characters kept past the head's and before the tail's cut, so a secret the cut would
# slice is whole when `text(redact)` redacts, and only then is the text cut (a piece of a
# key left at a cut is no exact value any redaction could find).
MARGIN = 1024


class Capture:
    """A stream's head and tail within `limit` characters, and (optionally) the whole of it,
    up to `full_limit`, for spilling."""

    __slots__ = (
        "_decoder",
        "_full",
        "_full_len",
        "_full_limit",
        "_head",
        "_head_len",
        "_head_limit",
        "_keep_head",
        "_keep_tail",
        "_limit",
        "_tail",
        "_tail_len",
        "_tail_limit",
        "total",
    )

    def __init__(self, limit: int, full_limit: int = 0) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._limit = limit
        self._keep_head = limit // 2
        self._keep_tail = limit - self._keep_head
        self._head_limit = self._keep_head + MARGIN
        self._tail_limit = self._keep_tail + MARGIN
        self._head: list[str] = []
        self._head_len = 0
        self._tail: deque[str] = deque()
        self._tail_len = 0
        self._full: list[str] | None = [] if full_limit else None
        self._full_len = 0
        self._full_limit = full_limit
        self.total = 0

    def feed(self, data: bytes) -> None:
        self._add(self._decoder.decode(data))

    def finish(self) -> None:
        self._add(self._decoder.decode(b"", final=True))

    def _add(self, text: str) -> None:
        if not text:
            return
        self.total += len(text)
        full = self._full
        if full is not None and self._full_len < self._full_limit:
            full.append(text)
            self._full_len += len(text)
        room = self._head_limit - self._head_len
        if room > 0:
            part = text[:room]
            self._head.append(part)
            self._head_len += len(part)
            text = text[room:]
            if not text:
                return
        tail = self._tail
        tail.append(text)
        self._tail_len += len(text)
        while self._tail_len - len(tail[0]) >= self._tail_limit:
            self._tail_len -= len(tail.popleft())

    @property
    def truncated(self) -> bool:
        return self.total > self._limit

    def text(self, redact: Callable[[str], str] | None = None) -> str:
        """The output, or its head and tail around a marker when it is too long; with
        `redact`, each side is redacted with its margin before it is cut to size."""
        head = "".join(self._head)
        tail = "".join(self._tail)
        if not self.truncated:
            return head + tail
        if len(head) + len(tail) == self.total:  # nothing dropped yet: one piece
            head = tail = head + tail
        else:
            tail = tail[-self._tail_limit :]
        if redact is not None:
            head = redact(head)
            tail = head if tail is head else redact(tail)
        dropped = self.total - self._keep_head - self._keep_tail
        return (
            f"{head[: self._keep_head]}\n[... {dropped:,} of {self.total:,} characters"
            f" omitted ...]\n{tail[-self._keep_tail :]}"
        )

    def full(self) -> str:
        text = "".join(self._full or ())
        if self.total > len(text):
            text += f"\n[... the last {self.total - len(text):,} characters were not kept ...]\n"
        return text


class OutputRing:
    """A background process's recent output, addressed by absolute offsets so each reader
    can ask for what is new since it last looked."""

    __slots__ = ("_decoder", "_limit", "_parts", "_start", "end")

    def __init__(self, limit: int) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._limit = limit
        self._parts: deque[str] = deque()
        self._start = 0  # offset of the first character still kept
        self.end = 0

    def feed(self, data: bytes, final: bool = False) -> None:
        text = self._decoder.decode(data, final=final)
        if not text:
            return
        parts = self._parts
        parts.append(text)
        self.end += len(text)
        excess = self.end - self._start - self._limit
        while excess >= len(parts[0]):
            excess -= len(parts[0])
            self._start += len(parts.popleft())
        if excess > 0:
            parts[0] = parts[0][excess:]
            self._start += excess

    def read(self, offset: int) -> str:
        """Everything from `offset` on, with a note when part of it was already dropped."""
        kept = "".join(self._parts)
        if offset >= self._start:
            return kept[offset - self._start :]
        return f"[... {self._start - offset:,} characters dropped ...]\n{kept}"
