"""The heartbeat as the settings describe it (`[heartbeat]`).

The checklist is `$SEAM_HOME/personalities/<id>/HEARTBEAT.md` for the heartbeat's base
personality (`[heartbeat] personality`, else `[agent] personality`) when that file exists,
else `$SEAM_HOME/HEARTBEAT.md`; it is read on every beat, so an edit shows at the next one.
Both sit in `$SEAM_HOME`, which the agent cannot write (`wiring/reach.py`). The ledger is
`$SEAM_HOME/heartbeat.jsonl`. Off by default: `every = ""`.

What a beat does is plugins/heartbeat (runner, cron_kind); when it beats is
plugins/heartbeat/schedule.py; `seam heartbeat status` is plugins/heartbeat/status.py.
Here the settings are read and those parts built.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from seam.contracts.cron import CronJob, CronStore
from seam.contracts.memory import MemoryProvider
from seam.contracts.personality import PersonalityRegistry
from seam.core.identity import parse_session_storage_key
from seam.core.memory import NoopMemory, memory_for_session
from seam.plugins.heartbeat.activity import StoreActivity, beat_memory
from seam.plugins.heartbeat.cron_kind import HeartbeatKind
from seam.plugins.heartbeat.ledger import HeartbeatLedger, HeartbeatRun
from seam.plugins.heartbeat.news import BeatNews
from seam.plugins.heartbeat.personality import HEARTBEAT_PERSONALITY, HeartbeatPersonalities
from seam.plugins.heartbeat.runner import BeatRuntime, run_heartbeat
from seam.plugins.heartbeat.schedule import BEAT_PROMPT, heartbeat_job, manual_slot, sync_job
from seam.plugins.heartbeat.status import HeartbeatSetting, run_line
from seam.plugins.heartbeat.status import status_lines as setting_status_lines
from seam.wiring.delivery import DeliveryRuntime, build_dnd, delivery_for, runtime_settings
from seam.wiring.heartbeat_personality import (
    CHECKLIST_FILE,
    base_personality,
    checklist_path,
    checklist_reader,
    section,
    with_heartbeat,
)
from seam.wiring.settings import Settings

LEDGER_FILE = "heartbeat.jsonl"

__all__ = [
    "BEAT_PROMPT",
    "CHECKLIST_FILE",
    "HEARTBEAT_PERSONALITY",
    "HeartbeatRuntime",
    "base_personality",
    "beat",
    "checklist_path",
    "checklist_reader",
    "heartbeat_kind",
    "run_line",
    "section",
    "status_lines",
    "sync_heartbeat_job",
    "with_heartbeat",
]


class HeartbeatRuntime(DeliveryRuntime, BeatRuntime, Protocol):
    """What a beat needs of a runtime (`wiring.runtime.Runtime` is one): its store and
    settings (delivery), a durable `ask`, and its personalities."""

    @property
    def personalities(self) -> PersonalityRegistry: ...

    @property
    def memory(self) -> MemoryProvider: ...


def ledger(settings: Settings) -> HeartbeatLedger:
    return HeartbeatLedger(settings.home / LEDGER_FILE)


def _registry(runtime: HeartbeatRuntime, settings: Settings) -> HeartbeatPersonalities:
    registry = runtime.personalities
    if isinstance(registry, HeartbeatPersonalities):
        return registry
    return with_heartbeat(registry, settings)


def beat_news(runtime: HeartbeatRuntime, settings: Settings, cron: CronStore | None) -> BeatNews:
    """What tells a beat whether anything is new (plugins/heartbeat/news.py): the memory
    a beat's session gets, the store's sessions and cron runs, `[heartbeat] tools`, and
    the quiet-hours zones (a checklist about days reads the date in each)."""
    key = runtime.session_key_for(f"heartbeat:{HEARTBEAT_PERSONALITY}")
    memory = memory_for_session(runtime.memory, key)
    zones = tuple(dict.fromkeys(rule.tz for rule in settings.config.dnd.rules))
    return BeatNews(
        beat_memory(None if isinstance(memory, NoopMemory) else memory),
        StoreActivity(runtime.sessions, cron, lambda key: parse_session_storage_key(key)[2]),
        tools=tuple(section(settings).tools),
        zones=zones,
    )


async def beat(
    runtime: HeartbeatRuntime,
    *,
    clock: Callable[[], float] = time.time,
    slot: float | None = None,
) -> HeartbeatRun:
    """One beat now (or for `slot`) with the runtime's settings: its Delivery, quiet
    hours, checklist and ledger."""
    settings = runtime_settings(runtime)
    beats = ledger(settings)
    return await run_heartbeat(
        runtime,
        delivery_for(runtime, clock=clock),
        build_dnd(settings, clock=clock),
        clock,
        ledger=beats,
        checklist=_registry(runtime, settings).checklist_text(),
        target=section(settings).deliver,
        slot=manual_slot(beats, clock()) if slot is None else slot,
        news=beat_news(runtime, settings, getattr(runtime.store, "cron", None)),
    )


def heartbeat_kind(
    runtime: HeartbeatRuntime,
    *,
    clock: Callable[[], float] = time.time,
    cron: CronStore | None = None,
) -> HeartbeatKind:
    """The hooks of the `heartbeat` cron job kind for the runtime's cron scheduler (its
    Delivery, quiet hours, checklist, ledger, and what tells it anything is new, with
    `cron` the scheduler's store); see plugins/heartbeat/cron_kind.py."""
    settings = runtime_settings(runtime)
    return HeartbeatKind(
        runtime.store,
        runtime.session_key_for,
        delivery_for(runtime, clock=clock),
        build_dnd(settings, clock=clock),
        ledger(settings),
        _registry(runtime, settings).checklist_text,
        clock=clock,
        news=beat_news(runtime, settings, cron),
    )


def settings_job(settings: Settings, now: float) -> CronJob | None:
    """The built-in job `[heartbeat]` describes (None: off); first due one interval on."""
    hb = section(settings)
    return heartbeat_job(hb.every, hb.every_seconds, hb.deliver, now)


async def sync_heartbeat_job(store: CronStore, settings: Settings, now: float) -> CronJob | None:
    """Keep the built-in job in step with `[heartbeat]` (plugins/heartbeat/schedule.py:
    `sync_job`). Every process that runs the scheduler calls this on start."""
    return await sync_job(store, settings_job(settings, now))


def status_lines(
    settings: Settings, *, now: float | None = None, due: float | None = None
) -> list[str]:
    """`seam heartbeat status`: the setting, the next beat, the last runs and their cost.
    `due`: when the scheduler says the next beat is (else worked out from the ledger)."""
    hb = section(settings)
    setting = HeartbeatSetting(
        every=hb.every,
        every_seconds=hb.every_seconds,
        personality=base_personality(settings),
        deliver=hb.deliver,
        checklist=checklist_path(settings),
        config_path=settings.config_path,
        tools=tuple(hb.tools),
    )
    return setting_status_lines(setting, ledger(settings), time.time() if now is None else now, due)
