"""When the heartbeat beats: the built-in cron job `[heartbeat]` describes, kept in step
with the settings, and the slots of beats run by hand.

The job's id is fixed (`heartbeat`), so every process that runs a scheduler agrees on one
job; wiring/heartbeat.py reads `[heartbeat]` and hands the values in.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from seam.contracts.cron import CronJob, CronStore
from seam.plugins.heartbeat.cron_kind import HEARTBEAT_JOB
from seam.plugins.heartbeat.ledger import HeartbeatLedger
from seam.plugins.heartbeat.personality import HEARTBEAT_PERSONALITY

# The prompt of a scheduled beat (the checklist itself is the personality's soul).
BEAT_PROMPT = "Heartbeat. Go through your checklist."


def heartbeat_job(schedule: str, every: float, deliver: str, now: float) -> CronJob | None:
    """The built-in job beating every `every` seconds (`schedule` is how the settings
    write it), first due one interval on; None when `every` is 0 (off)."""
    if every <= 0:
        return None
    return CronJob(
        id=HEARTBEAT_JOB,
        prompt=BEAT_PROMPT,
        schedule=schedule,
        schedule_kind="interval",
        created_at=now,
        next_due_at=now + every,
        personality=HEARTBEAT_PERSONALITY,
        deliver=deliver,
        missed="skip",
        kind="heartbeat",
    )


async def sync_job(store: CronStore, wanted: CronJob | None) -> CronJob | None:
    """Keep the built-in job in step with `wanted`: added when turned on, its schedule
    and target updated when changed (next due one interval from now), removed when off
    (None); left alone (its next slot kept) when nothing changed."""
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


def slot_time(slot: str) -> float:
    """The time a slot name (`runner.slot_name`) stands for."""
    return datetime.strptime(slot, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()


def manual_slot(ledger: HeartbeatLedger, now: float) -> float:
    """The slot of a beat run by hand now. Slots are named to the second: a second
    `seam heartbeat run` within the same second is a beat of its own, not a replay of the
    first one's submission, so it takes the next free second."""
    last = ledger.last()
    if last is not None and slot_time(last.slot) >= int(now):
        return slot_time(last.slot) + 1
    return now


def next_due(ledger: HeartbeatLedger, every: float, now: float) -> float | None:
    """When the next beat is due by the ledger (the last slot plus `every`; now when
    none ran yet); None when the heartbeat is off (`every` is 0)."""
    if every <= 0:
        return None
    last = ledger.last()
    if last is None:
        return now
    return max(now, slot_time(last.slot) + every)
