"""Showing the model's retries while a person waits, instead of silence.

Each retry is one line, `retrying in 4 s (attempt 2 of 5): connection refused`. On a
terminal a spinner (Rich, imported only when a retry happens) counts the back-off down
below it and disappears when the next attempt starts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from seam.contracts.model import RetryNotice

if TYPE_CHECKING:
    from rich.status import Status

# How often the countdown is redrawn.
_TICK = 0.25


class RetryView:
    """An `on_retry` callback: writes each notice with `write_line`, and on a terminal
    shows a countdown spinner on `out` until the back-off ends or `stop()` is called
    (leaving `async with` calls it too)."""

    def __init__(self, out: TextIO, write_line: Callable[[str], None] | None = None) -> None:
        self._out = out
        self._write_line = write_line or self._plain
        self._tty = out.isatty()
        self._status: Status | None = None
        self._timer: asyncio.TimerHandle | None = None

    async def __aenter__(self) -> RetryView:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.stop()

    def __call__(self, notice: RetryNotice) -> None:
        self.stop()
        self._write_line(notice.line())
        if self._tty and notice.delay >= _TICK:
            self._count_down(notice)

    def stop(self) -> None:
        """Take the spinner down (the next attempt began, or the turn ended)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._status is not None:
            self._status.stop()
            self._status = None

    def _plain(self, line: str) -> None:
        self._out.write(line + "\n")
        self._out.flush()

    def _count_down(self, notice: RetryNotice) -> None:
        from rich.console import Console

        loop = asyncio.get_running_loop()
        ends = loop.time() + notice.delay
        attempt = f"attempt {notice.attempt} of {notice.attempts}"
        status = Console(file=self._out, highlight=False).status(
            f"waiting {notice.delay:.0f} s before {attempt}…", spinner="dots"
        )
        status.start()
        self._status = status

        def tick() -> None:
            left = ends - loop.time()
            if left <= 0 or self._status is not status:
                self.stop()
                return
            status.update(f"waiting {left:.0f} s before {attempt}…")
            self._timer = loop.call_later(min(_TICK, left), tick)

        self._timer = loop.call_later(min(_TICK, notice.delay), tick)
