"""The model's retries as they happen, for the streams that follow the retrying session.

A provider that is about to wait and send a failed request again tells its `on_retry`
callback, which knows nothing of sessions. It runs inside the turn's task, where the
coordinator has set the running turn's log fields (its session key and submission), so
`RetryBoard` learns from them whose turn waits and hands the notice to every stream of
that session. Retries are live news, not history: they are not stored and carry no
sequence number. A stream that opens during a back-off (the page opening its stream just
as its first message fails, or a reload) gets the pending retry first, with the seconds
left; the session's next event ends it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Any

from seam.contracts.model import RetryNotice
from seam.wiring.web import LOG_FIELDS

RetryPayload = dict[str, Any]
Listener = Callable[[RetryPayload], None]


def retry_payload(notice: RetryNotice, session_key: str, submission_id: str) -> RetryPayload:
    """What a stream sends for one retry (`event: retry`)."""
    return {
        "type": "retry",
        "session_key": session_key,
        "submission_id": submission_id,
        "attempt": notice.attempt,
        "attempts": notice.attempts,
        "delay": round(notice.delay, 3),
        "reason": notice.reason,
        "provider": notice.provider,
        "message": notice.line(),
    }


class RetryBoard:
    """An `on_retry` callback that fans each retry out to the streams of its session."""

    def __init__(self) -> None:
        self._listeners: dict[str, set[Listener]] = {}
        # The retry each session waits on: its payload and when (monotonic) it was sent.
        self._pending: dict[str, tuple[RetryPayload, float]] = {}

    def __call__(self, notice: RetryNotice) -> None:
        fields = LOG_FIELDS.get()
        key = fields.get("session")
        if not key:
            return  # not a turn's call (a title or a memory review): nobody waits on it
        payload = retry_payload(notice, key, fields.get("submission", ""))
        self._pending[key] = (payload, time.monotonic())
        for listener in tuple(self._listeners.get(key, ())):
            listener(payload)

    def seen(self, key: str) -> None:
        """Session `key` sent an event: the attempt it waited for began (or the turn
        ended), so no retry is pending any more."""
        if self._pending:
            self._pending.pop(key, None)

    def _still_pending(self, key: str) -> RetryPayload | None:
        """The retry `key` waits on, with the seconds of back-off left; None if none."""
        pending = self._pending.get(key)
        if pending is None:
            return None
        payload, sent = pending
        left = payload["delay"] - (time.monotonic() - sent)
        if left <= 0:
            del self._pending[key]
            return None
        return {**payload, "delay": round(left, 3)}

    def listen(self, key: str, listener: Listener) -> Listening:
        """`listener` hears each retry of session `key`'s turns while the block runs (it
        is called in the retrying turn's task: it must not block). The block is given
        the retry `key` waits on now, if any (`_still_pending`)."""
        return Listening(self, key, listener)

    @contextlib.contextmanager
    def subscribe(self, key: str) -> Iterator[asyncio.Queue[RetryPayload]]:
        """A queue of the retries of session `key`'s turns (the pending one first), while
        the block runs."""
        queue: asyncio.Queue[RetryPayload] = asyncio.Queue()
        with self.listen(key, queue.put_nowait) as pending:
            if pending is not None:
                queue.put_nowait(pending)
            yield queue


class Listening:
    """`RetryBoard.listen`'s block: a class rather than a generator, since every event
    stream opens one (one object, no generator to step in and out of)."""

    __slots__ = ("_board", "_key", "_listener", "_listeners")

    def __init__(self, board: RetryBoard, key: str, listener: Listener) -> None:
        self._board = board
        self._key = key
        self._listener = listener
        self._listeners: set[Listener] = set()

    def __enter__(self) -> RetryPayload | None:
        board, key = self._board, self._key
        pending = board._still_pending(key)
        self._listeners = board._listeners.setdefault(key, set())
        self._listeners.add(self._listener)
        return pending

    def __exit__(self, *_: object) -> None:
        listeners, every = self._listeners, self._board._listeners
        listeners.discard(self._listener)
        if not listeners and every.get(self._key) is listeners:
            del every[self._key]


__all__ = ["Listener", "Listening", "RetryBoard", "RetryPayload", "retry_payload"]
