"""What each heartbeat did and cost: one JSON line per beat in `$SEAM_HOME/heartbeat.jsonl`.

A beat is `ok` (the reply was the all-clear, dropped), `delivered` (it found something:
the Delivery's verdict says whether it went out or waits for quiet hours to end),
`skipped` (quiet hours, no checklist, nothing new since the last all-clear: see
`news.py`) or `failed` (the turn failed; the error is kept). A beat that ran keeps the
fingerprint of what it read and when (`inputs`, `inputs_at`), so the next one can tell
whether anything is new.
Tokens and cost are the turn's, so `seam heartbeat status` shows what the heartbeat costs
before the bill does. Each line is one `write` on a file opened for appending, so two
processes recording beats never interleave a line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Literal, TypedDict

BeatStatus = Literal["ok", "delivered", "skipped", "failed"]


@dataclass(frozen=True, slots=True)
class HeartbeatRun:
    slot: str  # the beat's slot, ISO 8601 UTC to the second ("2026-12-01T19:30:00Z")
    status: BeatStatus
    started_at: float
    settled_at: float
    reason: str = ""  # why it was skipped or failed
    session: str = ""  # the public session name the turn ran in
    submission: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None  # USD, when the model's price is known
    delivery: str | None = None  # the Delivery's verdict (queued, held, ...), when delivered
    reply: str = ""  # the reply's first characters, for the status listing
    inputs: str = ""  # the fingerprint of what the beat read (news.py); "": none taken
    inputs_at: float | None = None  # when it read them


class BeatDetails(TypedDict, total=False):
    """The optional fields of a `HeartbeatRun`, as a beat gathers them."""

    reason: str
    session: str
    submission: str
    input_tokens: int
    output_tokens: int
    cost: float | None
    delivery: str | None
    reply: str
    inputs: str
    inputs_at: float | None


class HeartbeatLedger:
    """The JSON-lines ledger at `path` (created on the first beat)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, run: HeartbeatRun) -> None:
        line = json.dumps(asdict(run), ensure_ascii=False) + "\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)

    def recent(self, limit: int = 10) -> list[HeartbeatRun]:
        """The last `limit` beats, oldest first; a damaged line is skipped."""
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        runs: list[HeartbeatRun] = []
        names = {f.name for f in fields(HeartbeatRun)}
        for line in lines[-limit:] if limit else lines:
            try:
                data = json.loads(line)
                runs.append(HeartbeatRun(**{k: v for k, v in data.items() if k in names}))
            except (ValueError, TypeError):
                continue
        return runs

    def last(self) -> HeartbeatRun | None:
        found = self.recent(1)
        return found[0] if found else None


def totals(runs: Sequence[HeartbeatRun]) -> tuple[int, float | None]:
    """Tokens and cost (None when no price was known for any) over `runs`."""
    tokens = sum(run.input_tokens + run.output_tokens for run in runs)
    costs = [run.cost for run in runs if run.cost is not None]
    return tokens, (sum(costs) if costs else None)
