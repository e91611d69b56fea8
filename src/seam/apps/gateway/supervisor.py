"""Keeping one adapter connected: hold its lock, run it, watch it, rebuild it.

Adapters reconnect with back-off themselves; what they cannot see is a connection that is
open and silent (a dead socket parks a long poll forever without an error). The watchdog
here looks at `health().last_received_at`: no progress for `stall_after` seconds (three
times the poll timeout) and the adapter is cancelled, closed and built again. State
changes are logged; the owner is told (through the outbox, `[gateway] owner`) when an
adapter has been down longer than `alert_after`; the status file `seam doctor` reads is
rewritten every few seconds.

Only one process runs an adapter: the supervisor takes its lock first (PostgreSQL: an
advisory lock; SQLite: a file lock) and the others stand by, trying again every few
seconds, so when the holder dies another takes over and answers what was pending.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any

from seam.apps.gateway.runner import Gateway
from seam.apps.gateway.sender import ChatSender
from seam.apps.gateway.status import write_status
from seam.contracts.chat import AdapterHealth, ChatAdapter
from seam.contracts.outbox import Outgoing
from seam.wiring.gateway import AdapterLock, AdapterSpec, deliver_forever

log = logging.getLogger("seam.gateway")

# No progress for this many poll timeouts and the connection is taken for dead.
STALL_FACTOR = 3.0


@dataclass(frozen=True)
class WatchOptions:
    # Seconds without progress (`last_received_at`) before the adapter is rebuilt;
    # None: three times the adapter's `poll_timeout` (30 s when it has none).
    stall_after: float | None = None
    check_every: float = 2.0
    alert_after: float = 600.0
    lock_retry: float = 3.0
    # Seconds before an adapter whose `run` ended (crashed) is built again.
    restart_delay: float = 2.0


@dataclass(eq=False)
class Supervisor:
    """Runs one platform's adapter under its lock, rebuilding it when it crashes or
    stalls and writing its health to `status_path`; `state`, `health`, `down_since` and
    `rebuilds` are what it last saw."""

    gateway: Gateway
    spec: AdapterSpec
    lock: AdapterLock
    _: KW_ONLY
    options: WatchOptions = field(default_factory=WatchOptions)
    status_path: Path | None = None
    owner: str = ""
    delivery_owner: str = "gateway"
    clock: Callable[[], float] = time.time
    state: str = field(default="starting", init=False)
    health: AdapterHealth | None = field(default=None, init=False)
    down_since: float | None = field(default=None, init=False)
    rebuilds: int = field(default=0, init=False)
    _alerted: float | None = field(default=None, init=False)

    @property
    def name(self) -> str:
        return self.spec.name

    async def run(self) -> None:
        standing_by = False
        while True:
            if not await self.lock.acquire():
                if not standing_by:
                    log.info("%s: another gateway holds it; standing by", self.name)
                    standing_by = True
                self._set_state("standby")
                self._write_status()
                await asyncio.sleep(self.options.lock_retry)
                continue
            standing_by = False
            log.info("%s: holding the adapter (pid %d)", self.name, os.getpid())
            try:
                await self._hold()
            finally:
                self.gateway.slot(self.name).adapter = None
                await self.gateway.stop_platform(self.name)
                await self.lock.release()

    async def _hold(self) -> None:
        slot = self.gateway.slot(self.name)
        adapter = self.spec.build()
        slot.adapter = adapter
        self.gateway.catch_up(adapter)
        await self.gateway.recover(self.name)
        sender = ChatSender(self.name, slot)
        background = [
            asyncio.ensure_future(
                deliver_forever(self.gateway.outbox, sender, self.delivery_owner)
            ),
            asyncio.ensure_future(self.gateway.rescue_forever(self.name)),
            asyncio.ensure_future(self.gateway.retries.run_forever(self.name)),
        ]
        try:
            while True:
                reason = await self._serve(adapter)
                await _close(adapter)
                if reason == "lock":
                    log.warning("%s: lost the adapter lock; standing by", self.name)
                    return
                self.rebuilds += 1
                adapter = self.spec.build()
                slot.adapter = adapter
                self.gateway.catch_up(adapter)
        finally:
            for task in background:
                task.cancel()
            await asyncio.gather(*background, return_exceptions=True)
            await _close(slot.adapter)

    async def _serve(self, adapter: ChatAdapter) -> str:
        """Run `adapter` until it must be rebuilt ("stalled", "ended") or the lock is
        lost ("lock")."""

        async def deliver(event: Any) -> None:
            await self.gateway.deliver(adapter, event)

        stall_after = self.options.stall_after
        if stall_after is None:
            stall_after = STALL_FACTOR * float(getattr(adapter, "poll_timeout", 30.0))
        started = self.clock()
        runner = asyncio.ensure_future(adapter.run(deliver))
        try:
            while True:
                done, _ = await asyncio.wait({runner}, timeout=self.options.check_every)
                if done:
                    exc = runner.exception() if not runner.cancelled() else None
                    log.warning("%s: the adapter stopped (%s); restarting", self.name, exc)
                    self._set_state("reconnecting", str(exc) if exc else "stopped")
                    await asyncio.sleep(self.options.restart_delay)
                    return "ended"
                if not await self.lock.held():
                    return "lock"
                health = adapter.health()
                self.health = health
                now = self.clock()
                last = health.last_received_at or started
                stalled = now - max(last, started) > stall_after
                self._set_state(health.state, health.last_error)
                progressed = health.last_received_at is not None and last >= started
                self._track_down(health, stalled or not progressed, now)
                self._write_status()
                if stalled:
                    log.warning(
                        "%s: no progress for %.0f s; rebuilding the connection",
                        self.name,
                        now - max(last, started),
                    )
                    return "stalled"
        finally:
            if not runner.done():
                runner.cancel()
            with contextlib.suppress(BaseException):
                await runner

    def _set_state(self, state: str, error: str | None = None) -> None:
        if state != self.state:
            suffix = f": {error}" if error and state != "connected" else ""
            log.info("%s: %s -> %s%s", self.name, self.state, state, suffix)
            self.state = state

    def _track_down(self, health: AdapterHealth, stuck: bool, now: float) -> None:
        """Down: not connected, or connected without progress since this connection
        began (a rebuilt connection that stalls again keeps counting from the first)."""
        if health.state == "connected" and not stuck:
            if self.down_since is not None and self._alerted is not None:
                self._alert(f"[gateway] {self.name} is connected again.", "up")
            self.down_since = None
            self._alerted = None
            return
        if self.down_since is None:
            self.down_since = health.since or now
        if self._alerted is None and now - self.down_since >= self.options.alert_after:
            minutes = (now - self.down_since) / 60
            error = f": {health.last_error}" if health.last_error else ""
            self._alert(f"[gateway] {self.name} has been down for {minutes:.0f} min{error}", "down")
            self._alerted = self.down_since

    def _alert(self, text: str, kind: str) -> None:
        log.warning(text)
        if not self.owner or self.down_since is None:
            return
        key = f"gateway:{kind}:{self.name}:{int(self.down_since)}"
        body = json.dumps({"text": text, "source": "gateway"})
        self.gateway.spawn(
            self.gateway.outbox.enqueue(key, Outgoing(self.owner, body, source="gateway"))
        )

    def status(self) -> dict[str, Any]:
        health = self.health
        return {
            "state": self.state,
            "last_received_at": health.last_received_at if health else None,
            "last_error": health.last_error if health else None,
            "since": self.down_since,
            "rebuilds": self.rebuilds,
            "pid": os.getpid(),
            "updated_at": time.time(),
        }

    def _write_status(self) -> None:
        if self.status_path is None:
            return
        try:
            write_status(self.status_path, {self.name: self.status()})
        except OSError as exc:
            log.debug("could not write %s: %s", self.status_path, exc)


async def _close(adapter: ChatAdapter | None) -> None:
    if adapter is None:
        return
    try:
        async with asyncio.timeout(5.0):
            await adapter.close()
    except Exception as exc:
        log.debug("closing an adapter failed: %s", exc)
