"""The `DndChecker`: configured quiet-hour rules plus what `seam dnd` changes, in a file.

The rules from `[dnd] rules` are handed in (wiring reads the config) and are the person's
to edit there; `add_rule` / `remove_all` and the indefinite toggle live in a small JSON
state file (`$SEAM_HOME/dnd.json`), so `seam dnd on` in a terminal is seen at once by a
worker or gateway in another process: the file is read again whenever it changed. The
file sits in `$SEAM_HOME`, which the file tools and the sandbox deny in full
(`wiring/reach.py`), so the agent cannot switch its own quiet hours off.

Without a path the state is kept in memory (tests, an embedded runtime).
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from seam.contracts.dnd import DndRule
from seam.plugins.dnd.rules import WEEKDAYS, RuleError, active_rules, make_rule, quiet_until


@dataclass(frozen=True, slots=True)
class DndState:
    """What `seam dnd` keeps: the indefinite toggle (and since when) and added rules."""

    indefinite: bool = False
    since: float | None = None
    rules: tuple[DndRule, ...] = ()
    # Set by `remove_all`: the configured rules are off too, until `seam dnd` turns
    # them back on (`remove_all` cannot edit the person's config file).
    config_rules_off: bool = False


@dataclass
class _Cache:
    stamp: tuple[int, int] | None = None
    state: DndState = field(default_factory=DndState)


class FileDndChecker:
    """A `DndChecker` over `rules` (from config) and the state file at `path`."""

    def __init__(
        self,
        rules: Sequence[DndRule] = (),
        path: Path | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config_rules = tuple(rules)
        self.path = path
        self.clock = clock
        self._cache = _Cache()

    # -- the contract --

    async def quiet_until(self, now: float) -> float | None:
        state = await self.state()
        return quiet_until(self._rules(state), now, indefinite=state.indefinite)

    async def is_quiet_now(self, now: float) -> bool:
        return await self.quiet_until(now) is not None

    async def list_active(self, now: float) -> Sequence[DndRule]:
        return active_rules(self._rules(await self.state()), now)

    async def add_rule(self, rule: DndRule) -> None:
        state = await self.state()
        if rule not in state.rules:
            await self._save(
                DndState(
                    state.indefinite, state.since, (*state.rules, rule), state.config_rules_off
                )
            )

    async def toggle_indefinite(self, on: bool) -> None:
        state = await self.state()
        if state.indefinite == on:
            return
        since = self.clock() if on else None
        await self._save(DndState(on, since, state.rules, state.config_rules_off))

    async def remove_all(self) -> None:
        """Every rule off (the added ones deleted, the configured ones switched off) and
        the toggle off."""
        await self._save(DndState(config_rules_off=bool(self.config_rules)))

    # -- beyond the contract: what `seam dnd status` shows --

    async def rules(self) -> list[DndRule]:
        """The rules in force (configured ones first)."""
        return self._rules(await self.state())

    async def state(self) -> DndState:
        if self.path is None:
            return self._cache.state
        return await asyncio.to_thread(self._read)

    def _rules(self, state: DndState) -> list[DndRule]:
        configured = () if state.config_rules_off else self.config_rules
        return [*configured, *state.rules]

    def _read(self) -> DndState:
        assert self.path is not None
        try:
            info = self.path.stat()
        except FileNotFoundError:
            self._cache = _Cache()
            return self._cache.state
        stamp = (info.st_mtime_ns, info.st_size)
        if stamp != self._cache.stamp:
            self._cache = _Cache(
                stamp, decode_state(self.path.read_text(encoding="utf-8"), self.path)
            )
        return self._cache.state

    async def _save(self, state: DndState) -> None:
        if self.path is None:
            self._cache.state = state
            return
        await asyncio.to_thread(_write_atomically, self.path, encode_state(state))
        self._cache = _Cache()  # read back on next use: another process may write too


def encode_state(state: DndState) -> str:
    data = {
        "indefinite": state.indefinite,
        "since": state.since,
        "rules": [
            {
                "start": rule.start,
                "end": rule.end,
                "weekdays": [WEEKDAYS[day] for day in rule.weekdays],
                "tz": rule.tz,
            }
            for rule in state.rules
        ],
        "config_rules_off": state.config_rules_off,
    }
    return json.dumps(data, indent=2) + "\n"


def decode_state(text: str, where: Path | str = "dnd.json") -> DndState:
    """The state in `text`; a damaged file reads as quiet (indefinite), never as "send
    everything": it is the safer mistake, and `seam dnd off` rewrites the file."""
    try:
        data = json.loads(text)
        rules = tuple(
            make_rule(r["start"], r["end"], r.get("weekdays", WEEKDAYS), r.get("tz", "UTC"))
            for r in data.get("rules", ())
        )
        since = data.get("since")
        return DndState(
            indefinite=bool(data.get("indefinite", False)),
            since=float(since) if since is not None else None,
            rules=rules,
            config_rules_off=bool(data.get("config_rules_off", False)),
        )
    except (ValueError, TypeError, KeyError, AttributeError, RuleError):
        import logging

        logging.getLogger("seam.dnd").warning(
            "%s is damaged: treating do-not-disturb as on (seam dnd off rewrites it)", where
        )
        return DndState(indefinite=True)


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".dnd-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
