"""An adapter's `AdapterHealth`, kept current as its connection comes and goes: the
gateway's watchdog reads `last_received_at`, `seam doctor` the state and its last error."""

from __future__ import annotations

import logging
from collections.abc import Callable

from seam.contracts.chat import AdapterHealth, AdapterState


class HealthBook:
    def __init__(self, platform: str, clock: Callable[[], float], log: logging.Logger) -> None:
        self._platform = platform
        self._clock = clock
        self._log = log
        self.current = AdapterHealth("starting", since=clock())

    def progress(self) -> None:
        """The poll or socket moved (a message, a ping answered): the watchdog's signal."""
        h = self.current
        self.current = AdapterHealth(h.state, self._clock(), h.last_error, h.since)

    def set_state(self, state: AdapterState, error: str | None = None) -> None:
        """Enter `state` (logged once per change); `since` moves only when it changes."""
        h = self.current
        if h.state == state and (error is None or error == h.last_error):
            return
        if state != h.state:
            # A connection lost is worth a warning (with the error that lost it); the rest is news.
            level = logging.WARNING if state in ("down", "reconnecting") else logging.INFO
            shown = error or (h.last_error if level == logging.WARNING else None)
            self._log.log(level, "%s: %s%s", self._platform, state, f" ({shown})" if shown else "")
        since = self._clock() if state != h.state else h.since
        self.current = AdapterHealth(state, h.last_received_at, error or h.last_error, since)

    def failed(self, error: str) -> None:
        """An error that did not change the state (a flood wait, an undelivered update)."""
        self.set_state(self.current.state, error)
