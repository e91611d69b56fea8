"""`seam heartbeat status` as text: the setting, the next beat, whether idle beats are
skipped, the last runs and what they cost; and one beat as a line (`seam heartbeat run`
prints it)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from seam.plugins.heartbeat.ledger import HeartbeatLedger, HeartbeatRun, totals
from seam.plugins.heartbeat.news import NOTHING_NEW, runs_every_slot
from seam.plugins.heartbeat.schedule import next_due

STATUS_RUNS = 10


@dataclass(frozen=True, slots=True)
class HeartbeatSetting:
    """`[heartbeat]` as the status shows it (wiring/heartbeat.py reads it)."""

    every: str  # as written, e.g. "30m"; "" is off
    every_seconds: float
    personality: str  # the base personality whose checklist a beat reads
    deliver: str
    checklist: Path
    config_path: Path
    tools: tuple[str, ...] = ()  # `[heartbeat] tools`


def status_lines(
    setting: HeartbeatSetting, ledger: HeartbeatLedger, now: float, due: float | None = None
) -> list[str]:
    """The setting, the next beat (`due`, else worked out from the ledger), the
    checklist, the last runs and their tokens and cost."""
    if setting.every_seconds <= 0:
        lines = [f'heartbeat: off (set [heartbeat] every = "30m" in {setting.config_path})']
    else:
        lines = [
            f"heartbeat: every {setting.every} as {setting.personality}, delivers to"
            f" {setting.deliver}",
        ]
        due = due if due is not None else next_due(ledger, setting.every_seconds, now)
        if due is not None:
            lines.append(f"next due: {_when(due)}")
    path = setting.checklist
    lines.append(f"checklist: {path}" + ("" if path.is_file() else " (missing: beats skip)"))
    if path.is_file():
        lines.append(idle_line(path, setting.tools))
    return lines + runs_lines(ledger.recent(STATUS_RUNS))


def idle_line(checklist: Path, tools: tuple[str, ...]) -> str:
    """Whether a beat with nothing new is skipped (news.py), as the checklist reads now."""
    try:
        text = checklist.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return "idle beats: run (the checklist cannot be read)"
    why = runs_every_slot(text, tools)
    if why is not None:
        return f"idle beats: every slot runs ({why})"
    return "idle beats: skipped, no model call, when nothing is new since the last all-clear"


def runs_lines(runs: list[HeartbeatRun]) -> list[str]:
    if not runs:
        return ["last runs: none yet"]
    lines = ["last runs:", *("  " + run_line(run) for run in reversed(runs))]
    tokens, cost = totals(runs)
    spent = f", ${cost:.4f}" if cost is not None else ""
    idle = sum(1 for run in runs if run.status == "skipped" and run.reason.startswith(NOTHING_NEW))
    skips = f" ({idle} skipped with nothing new, 0 tokens)" if idle else ""
    lines.append(f"last {len(runs)} runs: {tokens:,} tokens{spent}{skips}")
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


def _when(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC")
