"""The heartbeat as the settings describe it (`[heartbeat]`), and `seam heartbeat status`.

The checklist is `$SEAM_HOME/personalities/<id>/HEARTBEAT.md` for the heartbeat's base
personality (`[heartbeat] personality`, else `[agent] personality`) when that file exists,
else `$SEAM_HOME/HEARTBEAT.md`; it is read on every beat, so an edit shows at the next one.
Both sit in `$SEAM_HOME`, which the agent cannot write (`wiring/reach.py`). The ledger is
`$SEAM_HOME/heartbeat.jsonl`. Off by default: `every = ""`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from seam.contracts.cron import CronJob, CronStore
from seam.contracts.personality import PersonalityRegistry
from seam.plugins.heartbeat.cron_kind import HEARTBEAT_JOB, HeartbeatKind
from seam.plugins.heartbeat.ledger import HeartbeatLedger, HeartbeatRun, totals
from seam.plugins.heartbeat.personality import HEARTBEAT_PERSONALITY, HeartbeatPersonalities
from seam.plugins.heartbeat.runner import run_heartbeat
from seam.wiring.delivery import build_dnd, delivery_for, runtime_settings
from seam.wiring.delivery_settings import HeartbeatSection
from seam.wiring.settings import Settings

if TYPE_CHECKING:
    from seam.wiring.runtime import Runtime

CHECKLIST_FILE = "HEARTBEAT.md"
LEDGER_FILE = "heartbeat.jsonl"
STATUS_RUNS = 10

__all__ = ["HEARTBEAT_PERSONALITY", "beat", "heartbeat_kind", "status_lines", "with_heartbeat"]


def section(settings: Settings) -> HeartbeatSection:
    return settings.config.heartbeat


def base_personality(settings: Settings) -> str:
    return section(settings).personality or settings.config.agent.personality


def checklist_path(settings: Settings, personality_id: str | None = None) -> Path:
    """The checklist a beat reads: the personality's own, else the home's."""
    own = settings.personalities_dir / (personality_id or base_personality(settings))
    if (own / CHECKLIST_FILE).is_file():
        return own / CHECKLIST_FILE
    return settings.home / CHECKLIST_FILE


def checklist_reader(settings: Settings) -> Callable[[str], str | None]:
    def read(personality_id: str) -> str | None:
        try:
            return checklist_path(settings, personality_id).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    return read


def with_heartbeat(
    personalities: PersonalityRegistry, settings: Settings
) -> HeartbeatPersonalities:
    """`personalities` plus the lean `heartbeat` one (in every runtime built from the
    settings, so any worker runs a beat the same way)."""
    hb = section(settings)
    return HeartbeatPersonalities(
        personalities,
        checklist_reader(settings),
        base=hb.personality or None,
        tools=hb.tools,
    )


def ledger(settings: Settings) -> HeartbeatLedger:
    return HeartbeatLedger(settings.home / LEDGER_FILE)


async def beat(
    runtime: Runtime,
    *,
    clock: Callable[[], float] = time.time,
    slot: float | None = None,
) -> HeartbeatRun:
    """One beat now (or for `slot`) with the runtime's settings: its Delivery, quiet
    hours, checklist and ledger."""
    settings = runtime_settings(runtime)
    registry = runtime.personalities
    if not isinstance(registry, HeartbeatPersonalities):
        registry = with_heartbeat(registry, settings)
    if slot is None:
        # Slots are named to the second: a second `seam heartbeat run` within the same
        # second is a beat of its own, not a replay of the first one's submission.
        slot = clock()
        last = ledger(settings).last()
        if last is not None and _slot_time(last.slot) >= int(slot):
            slot = _slot_time(last.slot) + 1
    return await run_heartbeat(
        runtime,
        delivery_for(runtime, clock=clock),
        build_dnd(settings, clock=clock),
        clock,
        ledger=ledger(settings),
        checklist=registry.checklist_text(),
        target=section(settings).deliver,
        slot=slot,
    )


def heartbeat_kind(runtime: Runtime, *, clock: Callable[[], float] = time.time) -> HeartbeatKind:
    """The hooks of the `heartbeat` cron job kind for the runtime's cron scheduler (its
    Delivery, quiet hours, checklist and ledger); see plugins/heartbeat/cron_kind.py."""
    settings = runtime_settings(runtime)
    registry = runtime.personalities
    if not isinstance(registry, HeartbeatPersonalities):
        registry = with_heartbeat(registry, settings)
    return HeartbeatKind(
        runtime.store,
        runtime.session_key_for,
        delivery_for(runtime, clock=clock),
        build_dnd(settings, clock=clock),
        ledger(settings),
        registry.checklist_text,
        clock=clock,
    )


# The prompt of a scheduled beat (the checklist itself is the personality's soul).
BEAT_PROMPT = "Heartbeat. Go through your checklist."


def heartbeat_job(settings: Settings, now: float) -> CronJob | None:
    """The built-in job `[heartbeat]` describes (None: off); first due one interval on."""
    hb = section(settings)
    every = hb.every_seconds
    if every <= 0:
        return None
    return CronJob(
        id=HEARTBEAT_JOB,
        prompt=BEAT_PROMPT,
        schedule=hb.every,
        schedule_kind="interval",
        created_at=now,
        next_due_at=now + every,
        personality=HEARTBEAT_PERSONALITY,
        deliver=hb.deliver,
        missed="skip",
        kind="heartbeat",
    )


async def sync_heartbeat_job(store: CronStore, settings: Settings, now: float) -> CronJob | None:
    """Keep the built-in job in step with `[heartbeat]`: added when turned on, its schedule
    and target updated when changed (next due one interval from now), removed when off;
    left alone (its next slot kept) when nothing changed. Every process that runs the
    scheduler calls this on start; the job id is fixed, so they agree on one job."""
    wanted = heartbeat_job(settings, now)
    found = await store.get_job(HEARTBEAT_JOB)
    if wanted is None:
        if found is not None and found.kind == "heartbeat":
            await store.delete(HEARTBEAT_JOB)
        return None
    if found is not None and (found.schedule, found.deliver) == (wanted.schedule, wanted.deliver):
        return found
    if found is not None:
        wanted = dataclasses.replace(wanted, created_at=found.created_at, paused=found.paused)
    return await store.upsert(wanted)


def next_due(settings: Settings, now: float) -> float | None:
    """When the next beat is due by the ledger (the last slot plus `every`; now when
    none ran yet); None when the heartbeat is off."""
    every = section(settings).every_seconds
    if every <= 0:
        return None
    last = ledger(settings).last()
    if last is None:
        return now
    return max(now, _slot_time(last.slot) + every)


def status_lines(
    settings: Settings, *, now: float | None = None, due: float | None = None
) -> list[str]:
    """`seam heartbeat status`: the setting, the next beat, the last runs and their cost.
    `due`: when the scheduler says the next beat is (else worked out from the ledger)."""
    now = time.time() if now is None else now
    hb = section(settings)
    path = checklist_path(settings)
    if hb.every_seconds <= 0:
        lines = [f'heartbeat: off (set [heartbeat] every = "30m" in {settings.config_path})']
    else:
        lines = [
            f"heartbeat: every {hb.every} as {base_personality(settings)}, delivers to"
            f" {hb.deliver}",
        ]
        due = due if due is not None else next_due(settings, now)
        if due is not None:
            lines.append(f"next due: {_when(due)}")
    lines.append(f"checklist: {path}" + ("" if path.is_file() else " (missing: beats skip)"))
    runs = ledger(settings).recent(STATUS_RUNS)
    if not runs:
        lines.append("last runs: none yet")
        return lines
    lines.append("last runs:")
    for run in reversed(runs):
        lines.append("  " + run_line(run))
    tokens, cost = totals(runs)
    spent = f", ${cost:.4f}" if cost is not None else ""
    lines.append(f"last {len(runs)} runs: {tokens:,} tokens{spent}")
    return lines


def run_line(run: HeartbeatRun) -> str:
    tokens = run.input_tokens + run.output_tokens
    parts = [run.slot, run.status.ljust(9)]
    if run.status == "skipped":
        parts.append(run.reason)
    else:
        parts.append(f"{tokens:,} tokens ({run.input_tokens:,} in)")
        if run.cost is not None:
            parts.append(f"${run.cost:.4f}")
        if run.delivery:
            parts.append(run.delivery)
        if run.status == "failed":
            parts.append(run.reason)
        elif run.status == "delivered" and run.reply:
            parts.append(repr(run.reply[:60]))
    return "  ".join(parts)


def _slot_time(slot: str) -> float:
    return datetime.strptime(slot, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()


def _when(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC")
