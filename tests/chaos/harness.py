"""The chaos run: N submissions across M sessions served by real `seam worker`
processes while the model fails at random, workers are SIGKILLed at random moments
(and started again), the PostgreSQL server restarts once and the disk fills once.
Afterwards every submission, transcript and event log is checked (see `check`)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import sqlite3
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from seam.core.event_log import replay
from seam.wiring import create_runtime
from seam.wiring.settings import load_settings
from tests.chaos.infra import SmallDisk, ThrowawayPostgres, Workers
from tests.chaos.model import ChaosModel
from tests.cli.conftest import SEAM, make_cli

LEASE = 3.0
IDLE_TIMEOUT = 1.0


@dataclass(frozen=True)
class Mode:
    submissions: int
    sessions: int
    kills: int
    limit: float  # seconds the run may take before it counts as stuck


QUICK = Mode(submissions=150, sessions=15, kills=4, limit=240.0)
LONG = Mode(submissions=1000, sessions=50, kills=20, limit=1800.0)


def mode() -> Mode:
    """`SEAM_CHAOS=long` for the long run; the quick one otherwise."""
    return LONG if os.environ.get("SEAM_CHAOS", "").lower() == "long" else QUICK


@dataclass
class Figures:
    backend: str
    submissions: int = 0
    sessions: int = 0
    workers: int = 0
    kills: int = 0
    worker_exits: list[int] = field(default_factory=list)
    faults: Counter[str] = field(default_factory=Counter)
    model_requests: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    max_attempts_seen: int = 0
    lost: int = 0
    duplicated: int = 0
    invalid: int = 0
    replay_mismatches: int = 0
    integrity: str = ""
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)
    # Why the submissions that did not complete ended (a turn whose every model attempt
    # failed is settled as failed: that is an outcome, not a loss).
    errors: Counter[str] = field(default_factory=Counter)
    # Worker log lines saying the disk was full (proof the fault reached the workers).
    disk_errors: int = 0
    disk_full_seconds: float = 0.0

    def failed(self) -> bool:
        return (
            bool(self.lost or self.duplicated or self.invalid or self.replay_mismatches)
            or self.integrity != "ok"
        )

    def report(self) -> str:
        faults = ", ".join(f"{kind} {n}" for kind, n in sorted(self.faults.items()))
        outcomes = ", ".join(f"{kind} {n}" for kind, n in sorted(self.outcomes.items()))
        return (
            f"chaos [{self.backend}]: {self.submissions} submissions, {self.sessions} sessions,"
            f" {self.workers} workers, {self.seconds:.0f} s; kills {self.kills}, worker exits"
            f" {len(self.worker_exits)} {sorted(set(self.worker_exits))}; model requests"
            f" {self.model_requests}; faults: {faults}; outcomes: {outcomes}; max attempts"
            f" {self.max_attempts_seen}; lost {self.lost}, duplicated {self.duplicated},"
            f" invalid {self.invalid}, replay mismatches {self.replay_mismatches},"
            f" integrity {self.integrity}; disk full for {self.disk_full_seconds:.1f} s,"
            f" disk-full errors in worker logs {self.disk_errors};"
            f" not completed: {dict(self.errors)}"
        )


class Backend:
    name = ""

    def env(self) -> dict[str, str]:
        return {}

    def config(self) -> str:
        return ""

    def rows(self, query: str) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def integrity(self) -> str:
        raise NotImplementedError

    def stuck(self) -> str:
        """What holds the store up, for a run that went over its time (empty: nothing
        to say)."""
        return ""


class SqliteBackend(Backend):
    name = "sqlite"

    def __init__(self, db: Path) -> None:
        self.db = db

    def config(self) -> str:
        return f'path = "{self.db}"\n'

    def rows(self, query: str) -> list[tuple[Any, ...]]:
        with sqlite3.connect(self.db, timeout=30) as db:
            return db.execute(query).fetchall()

    def integrity(self) -> str:
        return " ".join(str(row[0]) for row in self.rows("PRAGMA integrity_check"))


class PostgresBackend(Backend):
    name = "postgresql"

    def __init__(self, server: ThrowawayPostgres) -> None:
        self.server = server
        self.url = server.url

    def env(self) -> dict[str, str]:
        return {"SEAM_STORE_URL": self.url}

    def rows(self, query: str) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.url, connect_timeout=5) as conn:
            return conn.execute(query).fetchall()

    def stuck(self) -> str:
        """The server's sessions that are not idle (an open transaction, a wait) and the
        row locks they hold or wait for: a claim skips locked rows, so a transaction left
        open stalls a session for good."""
        activity = self.rows(
            "SELECT pid, state, wait_event_type, now() - xact_start, left(query, 160)"
            " FROM pg_stat_activity WHERE backend_type = 'client backend'"
            " AND state <> 'idle' AND pid <> pg_backend_pid()"
        )
        locks = self.rows(
            "SELECT l.pid, l.locktype, l.relation::regclass::text, l.mode, l.granted"
            " FROM pg_locks AS l WHERE l.pid <> pg_backend_pid()"
            " AND l.locktype IN ('relation', 'tuple', 'transactionid')"
        )
        lines = ["--- PostgreSQL sessions not idle (pid, state, wait, in transaction for, query)"]
        lines += [f"  {row}" for row in activity]
        lines += ["--- locks (pid, type, relation, mode, granted)"]
        lines += [f"  {row}" for row in locks]
        return "\n".join(lines)

    def integrity(self) -> str:
        """amcheck's `bt_index_check` (with the heap check) on every B-tree index."""
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS amcheck")
            indexes = conn.execute(
                "SELECT c.oid::regclass::text FROM pg_index i"
                " JOIN pg_class c ON c.oid = i.indexrelid"
                " JOIN pg_am a ON a.oid = c.relam"
                " JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE a.amname = 'btree' AND n.nspname NOT IN ('pg_catalog', 'pg_toast')"
            ).fetchall()
            bad = []
            for (index,) in indexes:
                try:
                    conn.execute("SELECT bt_index_check(%s::regclass, true)", (index,))
                except psycopg.Error as exc:
                    bad.append(f"{index}: {exc}")
        return "ok" if indexes and not bad else f"amcheck on {len(indexes)} indexes: {bad}"


def _question(index: int, session: str) -> str:
    return f"Question {index} for {session}: please note it down. q{index:05d}"


def _tag(text: str) -> str:
    return text.split()[-1]


async def _submit(env: dict[str, str], home: Path, project: Path, m: Mode) -> dict[str, str]:
    """Queue the run's submissions, round robin over the sessions; tag -> session."""
    settings = load_settings(env, home=home, working_dir=project)
    runtime = create_runtime(settings=settings)
    tags: dict[str, str] = {}
    try:
        await runtime.open()
        for index in range(m.submissions):
            session = f"s{index % m.sessions:03d}"
            text = _question(index, session)
            await runtime.submit(session, text)
            tags[_tag(text)] = session
    finally:
        await runtime.aclose()
    return tags


@dataclass
class Plan:
    """When (by the number settled) each disruption happens."""

    kills: list[int]
    restart_at: int | None
    fill_at: int | None
    hold: float = 10.0


def run(
    tmp: Path,
    backend: Backend,
    *,
    workers: int,
    m: Mode,
    seed: int,
    restart: Callable[[], None] | None = None,
    disk: SmallDisk | None = None,
) -> Figures:
    rng = random.Random(seed)
    figures = Figures(backend.name, submissions=m.submissions, sessions=m.sessions)
    figures.workers = workers
    with ChaosModel(seed=seed, stall=IDLE_TIMEOUT + 1.5) as model:
        cli = make_cli(
            tmp, {"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "test-key", **backend.env()}
        )
        cli.write_config(
            f"[model]\nidle_timeout = {IDLE_TIMEOUT}\nmax_retries = 3\ntimeout = 60\n"
            f"[store]\nlease_seconds = {LEASE}\nmax_attempts = 10\n{backend.config()}"
        )
        started = time.monotonic()
        tags = asyncio.run(_submit(cli.env, cli.home, cli.project, m))
        total = m.submissions
        plan = Plan(
            kills=sorted(rng.randrange(total // 10, total * 9 // 10) for _ in range(m.kills)),
            restart_at=total * 3 // 10 if restart else None,
            fill_at=total // 2 if disk else None,
        )
        pool = Workers([str(SEAM), "worker"], cli.project, cli.env, tmp / "logs", workers)
        pool.start()
        freed_at: float | None = None
        filled_at = 0.0
        hits = 0
        home_logs = cli.home / "logs"  # where workers write tracebacks
        deadline = started + m.limit
        stuck = ""
        try:
            while time.monotonic() < deadline:
                try:
                    [(settled,)] = backend.rows(
                        "SELECT count(*) FROM submissions WHERE state = 'settled'"
                    )
                except (sqlite3.Error, psycopg.Error):
                    settled = -1  # the server is restarting: ask again in a moment
                if settled >= total:
                    break
                while plan.kills and settled >= plan.kills[0]:
                    plan.kills.pop(0)
                    time.sleep(rng.uniform(0, 0.4))  # a random moment of some turn
                    pool.kill_one(rng)
                if plan.restart_at is not None and settled >= plan.restart_at and restart:
                    plan.restart_at = None
                    restart()
                    figures.faults["pg_restart"] += 1
                if plan.fill_at is not None and settled >= plan.fill_at and disk:
                    plan.fill_at = None
                    hits = pool.count_lines("full", home_logs)
                    disk.fill()
                    figures.faults["disk_full"] += 1
                    filled_at = time.monotonic()
                    freed_at = filled_at + plan.hold
                if freed_at is not None and disk:
                    # Full until a worker has met it (SQLite reuses its WAL's pages, so a
                    # write may not need a new block at once), for `hold` seconds at most.
                    if pool.count_lines("full", home_logs) > hits:
                        freed_at = min(freed_at, filled_at + 1.0)
                    if time.monotonic() >= freed_at:
                        disk.free()
                        figures.disk_full_seconds = time.monotonic() - filled_at
                        freed_at = None
                pool.reap()
                time.sleep(0.2)
            else:  # over time: say what holds it up while the workers still do
                with contextlib.suppress(psycopg.Error, sqlite3.Error):
                    stuck = backend.stuck()
        finally:
            if disk:
                disk.free()
            pool.stop()
        figures.seconds = time.monotonic() - started
        figures.kills = pool.kills
        figures.worker_exits = pool.exits
        figures.faults.update(model.faults)
        figures.model_requests = len(model.chat_requests)
        figures.disk_errors = pool.count_lines("full", home_logs)
        asyncio.run(check(cli.env, cli.home, cli.project, backend, tags, figures))
        if figures.failed():
            figures.problems.append(pool.tail())
            if stuck:
                figures.problems.append(stuck)
    return figures


async def check(
    env: dict[str, str],
    home: Path,
    project: Path,
    backend: Backend,
    tags: dict[str, str],
    figures: Figures,
) -> None:
    """Every submission settled exactly once; every transcript valid; the event log
    agrees with the transcript; the store's own integrity check is clean."""
    problems = figures.problems
    settings = load_settings(env, home=home, working_dir=project)
    runtime = create_runtime(settings=settings)
    try:
        await runtime.open()
        subs = await runtime.store.submissions()
        by_tag = {_tag(s.input): s for s in subs}
        for tag in tags:
            sub = by_tag.get(tag)
            if sub is None or sub.state != "settled" or sub.outcome is None:
                figures.lost += 1
                problems.append(f"not settled: {tag} {sub}")
                continue
            figures.outcomes[sub.outcome] += 1
            if sub.outcome != "completed":
                figures.errors[f"{sub.outcome}: {(sub.error or '')[:160]}"] += 1
            figures.max_attempts_seen = max(figures.max_attempts_seen, sub.attempts)
            if sub.attempts > sub.max_attempts:
                figures.invalid += 1
                problems.append(f"{tag}: {sub.attempts} attempts > {sub.max_attempts}")
        if len(subs) != len(tags):
            figures.duplicated += abs(len(subs) - len(tags))
            problems.append(f"{len(subs)} submissions stored for {len(tags)} submitted")
        for session in sorted(set(tags.values())):
            key = runtime.session_key_for(session)
            messages = await runtime.sessions.messages(key)
            mine = [s for s in subs if s.session_key == key]
            _check_transcript(session, messages, mine, figures)
            events = await replay(runtime.store, key)
            _check_replay(session, messages, mine, events, figures)
    finally:
        await runtime.aclose()
    figures.integrity = backend.integrity()


def _check_transcript(session: str, messages: list[Any], subs: list[Any], f: Figures) -> None:
    users = Counter(_tag(m.content) for m in messages if m.role == "user")
    for sub in subs:
        seen = users.get(_tag(sub.input), 0)
        if seen > 1:
            f.duplicated += 1
            f.problems.append(f"{session}: user message {_tag(sub.input)} stored {seen} times")
        elif seen == 0 and sub.outcome == "completed":
            f.lost += 1
            f.problems.append(f"{session}: completed {_tag(sub.input)} has no user message")
    calls = Counter(c.id for m in messages if m.role == "assistant" for c in m.tool_calls)
    results = Counter(m.tool_call_id for m in messages if m.role == "tool")
    if calls != results:
        f.invalid += 1
        f.problems.append(f"{session}: tool calls {calls - results} / results {results - calls}")
        f.problems.append(_transcript_dump(messages, subs))
    texts = Counter(
        m.content for m in messages if m.role == "assistant" and m.content and not m.interrupted
    )
    doubled = [text for text, n in texts.items() if n > 1]
    if doubled:
        f.duplicated += len(doubled)
        f.problems.append(f"{session}: assistant text stored twice: {doubled[:3]}")
    for sub in subs:
        if sub.outcome == "completed" and texts.get(sub.result or "", 0) != 1:
            f.invalid += 1
            f.problems.append(f"{session}: result of {_tag(sub.input)} not in the transcript")


def _transcript_dump(messages: list[Any], subs: list[Any]) -> str:
    """The session as stored, for a failure's report: each message (role, start of its
    text, the calls it asks or answers, whether it was cut off), then each submission
    (its tag, attempts, outcome): what the next reader needs to tell how it came to be."""
    lines = [
        f"  {m.role:9} {m.content[:40]!r} calls={[c.id for c in m.tool_calls]}"
        f" answers={m.tool_call_id} interrupted={m.interrupted}"
        for m in messages
    ]
    lines += [f"  sub {_tag(s.input)} attempts={s.attempts} {s.outcome}" for s in subs]
    return "\n".join(lines)


def _check_replay(
    session: str, messages: list[Any], subs: list[Any], events: list[Any], f: Figures
) -> None:
    """The event log, replayed from the start, tells the same story as the transcript:
    sequence numbers strictly increase; each completed submission's answer was streamed
    and ended with a `done` carrying it; every tool result in the transcript has its
    `tool_start`, and every `tool_end` its result."""
    seqs = [e.seq for e in events]
    if seqs != sorted(set(seqs)):
        f.replay_mismatches += 1
        f.problems.append(f"{session}: event sequence numbers repeat or go back")
    done = Counter(e.text for e in events if e.type == "done")
    for sub in subs:
        if sub.outcome == "completed" and done.get(sub.result or "", 0) != 1:
            f.replay_mismatches += 1
            count = done.get(sub.result or "", 0)
            f.problems.append(f"{session}: {_tag(sub.input)} answer in {count} done events")
    started = {e.call_id for e in events if e.type == "tool_start"}
    ended = {e.call_id for e in events if e.type == "tool_end"}
    results = {m.tool_call_id for m in messages if m.role == "tool"}
    if not results <= started or not ended <= results:
        f.replay_mismatches += 1
        f.problems.append(
            f"{session}: results without tool_start {sorted(results - started)[:3]},"
            f" tool_end without result {sorted(ended - results)[:3]}"
        )


def dump(figures: Figures, path: Path) -> None:
    """The figures as JSON too, for the report."""
    body = {k: v for k, v in figures.__dict__.items() if k != "problems"}
    path.write_text(json.dumps(body, default=dict, indent=1), encoding="utf-8")
