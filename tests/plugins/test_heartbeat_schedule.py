"""When the heartbeat beats and how its status reads, driven without a runtime: the
built-in job kept in step with the setting, the slot of a beat run by hand, the next due
time by the ledger, and the status lines."""

from __future__ import annotations

from pathlib import Path

from seam.core.cron import InMemoryCronStore
from seam.plugins.heartbeat.cron_kind import HEARTBEAT_JOB
from seam.plugins.heartbeat.ledger import BeatStatus, HeartbeatLedger, HeartbeatRun
from seam.plugins.heartbeat.runner import slot_name
from seam.plugins.heartbeat.schedule import (
    heartbeat_job,
    manual_slot,
    next_due,
    slot_time,
    sync_job,
)
from seam.plugins.heartbeat.status import HeartbeatSetting, status_lines

NOON = 1_781_092_800.0  # 2026-06-10 12:00 UTC
HALF_HOUR = 1800.0


def beat_at(ledger: HeartbeatLedger, at: float, status: BeatStatus = "ok") -> None:
    ledger.append(HeartbeatRun(slot_name(at), status, at, at + 3, input_tokens=90))


async def test_the_job_follows_the_setting_and_keeps_its_slot_when_unchanged() -> None:
    store = InMemoryCronStore(clock=lambda: NOON)
    assert heartbeat_job("", 0.0, "owner", NOON) is None
    job = await sync_job(store, heartbeat_job("30m", HALF_HOUR, "owner", NOON))
    assert job is not None and (job.id, job.kind, job.next_due_at) == (
        HEARTBEAT_JOB,
        "heartbeat",
        NOON + HALF_HOUR,
    )
    later = heartbeat_job("30m", HALF_HOUR, "owner", NOON + 600)
    assert await sync_job(store, later) == job  # nothing changed: its next slot is kept
    moved = await sync_job(store, heartbeat_job("1h", 3600.0, "file:beats.md", NOON + 600))
    assert moved is not None and moved.created_at == NOON and moved.next_due_at == NOON + 4200
    assert await sync_job(store, None) is None
    assert await store.get_job(HEARTBEAT_JOB) is None


def test_a_beat_by_hand_in_the_same_second_takes_the_next_one(tmp_path: Path) -> None:
    ledger = HeartbeatLedger(tmp_path / "heartbeat.jsonl")
    assert manual_slot(ledger, NOON + 0.4) == NOON + 0.4
    beat_at(ledger, NOON)
    assert manual_slot(ledger, NOON + 0.4) == NOON + 1
    assert manual_slot(ledger, NOON + 5.5) == NOON + 5.5
    assert slot_time(slot_name(NOON + 7)) == NOON + 7


def test_next_due_is_now_before_any_beat_then_one_interval_after_the_last(
    tmp_path: Path,
) -> None:
    ledger = HeartbeatLedger(tmp_path / "heartbeat.jsonl")
    assert next_due(ledger, 0.0, NOON) is None
    assert next_due(ledger, HALF_HOUR, NOON) == NOON
    beat_at(ledger, NOON)
    assert next_due(ledger, HALF_HOUR, NOON + 60) == NOON + HALF_HOUR
    assert next_due(ledger, HALF_HOUR, NOON + 7200) == NOON + 7200  # overdue: now


def test_status_lines_show_the_setting_the_next_beat_and_the_runs(tmp_path: Path) -> None:
    ledger = HeartbeatLedger(tmp_path / "heartbeat.jsonl")
    setting = HeartbeatSetting(
        every="30m",
        every_seconds=HALF_HOUR,
        personality="work",
        deliver="owner",
        checklist=tmp_path / "HEARTBEAT.md",
        config_path=tmp_path / "config.toml",
    )
    assert status_lines(setting, ledger, NOON) == [
        "heartbeat: every 30m as work, delivers to owner",
        "next due: 2026-06-10 12:00 UTC",
        f"checklist: {tmp_path / 'HEARTBEAT.md'} (missing: beats skip)",
        "last runs: none yet",
    ]
    beat_at(ledger, NOON)
    lines = status_lines(setting, ledger, NOON + 60, due=NOON + 900)
    assert lines[1] == "next due: 2026-06-10 12:15 UTC"
    assert lines[-1] == "last 1 runs: 90 tokens"
    off = HeartbeatSetting("", 0.0, "work", "owner", tmp_path / "x.md", tmp_path / "c.toml")
    assert status_lines(off, ledger, NOON)[0].startswith("heartbeat: off (set [heartbeat] every")
