"""What an idle day costs (issue #29): a simulated day with nothing new to act on.

The configured runtime (`create_runtime`: the real SQLite store, sandbox, guard, memory
and outbox) with a scripted model that answers every call and counts it, on a fake clock
that the real cron scheduler ticks through one day:

- the heartbeat every 30 minutes (`[heartbeat] every = "30m"`), a checklist with no time
  of day in it, and nothing new all day: no message, no memory change;
- three cron jobs (every 1 h, 2 h and 4 h) with a `--check` that prints nothing (an empty
  inbox, no failed build, no changed note), run in bubblewrap like any check.

One slot of each is run before the day starts (the first beat has nothing to compare
with), then the day is measured: model calls, tokens (the prompt as estimated at 4
characters a token, plus the reply), what they would cost at `--input`/`--output` USD per
million tokens, CPU seconds (this process and its children: the sandboxed checks), and
rows added to the store (every table, full-text shadow tables aside) and heartbeat ledger
lines. The scripted model costs next to no CPU, so the CPU figures are Seam's own (a
real provider's calls would add their HTTP and parsing). For the figure before the
change, run it against another checkout, whose jobs take no check and whose beats are
never skipped:

    .venv/bin/python bench/idle_day.py
    git archive main src | tar -x -C /tmp/seam-main
    PYTHONPATH=/tmp/seam-main/src .venv/bin/python bench/idle_day.py
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from seam.contracts.messages import Usage
from seam.core.scripted_model import ScriptedModel, Step, text_step
from seam.core.tokens import CharTokenEstimator
from seam.services.sessions.sqlite import SQLiteSessionStore
from seam.testing.clock import ManualClock
from seam.wiring import create_runtime
from seam.wiring.cron import ScheduleSpec, admin_for, build_scheduler, cron_store_of
from seam.wiring.heartbeat import sync_heartbeat_job
from seam.wiring.memory import build_memory
from seam.wiring.settings import load_settings

START = 1_781_049_600.0  # 2026-06-10 00:00 UTC
SLOT = 1800.0
SLOTS = 48  # a day of half hours
CONFIG = '[heartbeat]\nevery = "30m"\ndeliver = "file:heartbeat.md"\n'
CHECKLIST = "- Is the backup disk over 90% full (see memory)?\n- Anything on my watch list?"
JOBS = (
    ("mail", "1h", "Summarise the new mail in inbox/.", "ls inbox"),
    ("build", "2h", "Tell me if the nightly build failed.", "find build -name '*.failed'"),
    ("notes", "4h", "What changed in the shared notes?", "find notes -newer notes/.seen"),
)


class CountingModel(ScriptedModel):
    """A scripted model that never runs out: the all-clear to a beat, a short answer to
    anything else, each with the tokens its request would cost."""

    def __init__(self) -> None:
        super().__init__()
        self.estimate = CharTokenEstimator()
        self.tokens = 0
        self.input_tokens = 0

    def reply(self, request: Any) -> Step:
        beat = "This is a heartbeat" in request.system
        text = "HEARTBEAT_OK" if beat else "Nothing new to report."
        sent = self.estimate.text(request.system) + self.estimate.messages(request.messages)
        sent += self.estimate.tools(request.tools)
        out = self.count_tokens(text)
        self.tokens += sent + out
        self.input_tokens += sent
        self.add(self.reply)  # one step per call, for ever
        return text_step(text, usage=Usage(input_tokens=sent, output_tokens=out))


def project(root: Path) -> None:
    """The folders the checks look at, with nothing new in them."""
    for folder in ("inbox", "build", "notes"):
        (root / folder).mkdir()
    (root / "notes" / "todo.md").write_text("- water the plants\n")
    (root / "notes" / ".seen").write_text("")


def rows(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        names = [
            name
            for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not name.startswith("sqlite_") and "fts" not in name
        ]
        return sum(conn.execute(f'SELECT COUNT(*) FROM "{n}"').fetchone()[0] for n in names)


def cpu(who: int) -> float:
    used = resource.getrusage(who)
    return used.ru_utime + used.ru_stime


async def day(root: Path) -> dict[str, float]:
    home = root / ".seam"
    home.mkdir()
    (home / "config.toml").write_text(CONFIG)
    (home / "HEARTBEAT.md").write_text(CHECKLIST)
    project(root)
    settings = load_settings({"HOME": str(root)}, home=home, working_dir=root)
    build_memory(settings).add("memory", "The backup disk is /mnt/backup, 41% full on Monday")
    clock = ManualClock(START)
    model = CountingModel()
    model.add(model.reply)
    store = SQLiteSessionStore(str(settings.store_path), clock=clock)
    runtime = create_runtime(settings, model=model, store=store)
    try:
        cron = cron_store_of(runtime.store)
        await sync_heartbeat_job(cron, settings, clock() - SLOT)
        admin = admin_for(runtime, clock=clock)
        for job_id, every, prompt, check in JOBS:
            spec = ScheduleSpec(every=every)
            await admin.add(prompt, spec, deliver="file:jobs.md", job_id=job_id, check=check)
        scheduler = build_scheduler(runtime, clock=clock)

        async def slot() -> None:
            await scheduler.tick()
            await runtime.drain_runnable()
            await scheduler.tick()
            clock.advance(SLOT)

        await slot()  # before the day: every first run (nothing yet to compare with)
        calls, tokens, before = len(model.requests), model.tokens, rows(settings.store_path)
        ledger = home / "heartbeat.jsonl"
        lines = len(ledger.read_text().splitlines()) if ledger.exists() else 0
        seam, kids = cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN)
        wall = time.perf_counter()
        for _ in range(SLOTS):
            await slot()
        notes = {run.note for job in JOBS for run in await cron.runs(job[0], limit=SLOTS)}
        print(f"before the day: {calls} model calls; the jobs' runs say {sorted(map(str, notes))}")
        return {
            "model calls": len(model.requests) - calls,
            "tokens": model.tokens - tokens,
            "cpu seconds, Seam": cpu(resource.RUSAGE_SELF) - seam,
            "cpu seconds, checks": cpu(resource.RUSAGE_CHILDREN) - kids,
            "wall seconds": time.perf_counter() - wall,
            "store rows added": rows(settings.store_path) - before,
            "ledger lines": len(ledger.read_text().splitlines()) - lines,
            "input share": (model.input_tokens / model.tokens) if model.tokens else 1.0,
        }
    finally:
        await runtime.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", type=float, default=3.0, help="USD per million in")
    parser.add_argument("--output", type=float, default=15.0, help="USD per million out")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="seam-idle-") as tmp:
        figures = asyncio.run(day(Path(tmp)))
    share = figures.pop("input share")
    tokens = figures["tokens"]
    usd = tokens * (share * args.input + (1 - share) * args.output) / 1e6
    print(f"an idle day: heartbeat every 30m, {len(JOBS)} cron jobs with nothing new")
    for name, value in figures.items():
        shown = f"{value:,.2f}" if "seconds" in name else f"{value:,.0f}"
        print(f"  {name:20} {shown}")
    print(f"  {'cost (USD)':20} {usd:.4f} at ${args.input:g}/${args.output:g} per M tokens")


if __name__ == "__main__":
    main()
