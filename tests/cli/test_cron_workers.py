"""Cron jobs in real `seam worker` processes: 100 due slots shared by two workers on
PostgreSQL and on SQLite, one of them SIGKILLed mid-run, each slot run once and delivered
once (counted in the `file:` delivery); and, in real time, `seam cron add --every 1m`
followed by `seam worker` writes its delivery within the minute."""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from seam.wiring import create_runtime
from seam.wiring.cron import ScheduleSpec, admin_for
from seam.wiring.settings import load_settings
from tests.cli.conftest import Cli, make_cli
from tests.support.openai_server import OpenAIServer, text_reply

pytestmark = pytest.mark.in_process

JOBS = 100
WAIT_LIMIT = 120.0
MARKER = re.compile(r"<!-- seam-delivery: (cron:[^ ]+) -->")


@pytest.fixture
def store_url(postgres_url: str) -> Iterator[str]:
    name = f"seam_cron_{secrets.token_hex(4)}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    parts = conninfo_to_dict(postgres_url)
    user = quote(str(parts.get("user", "")))
    password = quote(str(parts.get("password", "")))
    auth = f"{user}:{password}@" if password else f"{user}@"
    yield f"postgresql://{auth}{parts.get('host', '127.0.0.1')}:{parts.get('port', 5432)}/{name}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def wait_for(condition: Callable[[], bool], what: str, limit: float = WAIT_LIMIT) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def add_jobs(cli: Cli, count: int, deliver: str) -> list[str]:
    """`count` one-shot jobs due now, added through the Python API (a hundred `seam cron
    add` processes would take most of the test's time)."""

    async def go() -> list[str]:
        settings = load_settings(cli.env, home=cli.home, working_dir=cli.project)
        async with create_runtime(settings=settings) as runtime:
            admin = admin_for(runtime)
            past = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(time.time() - 5))
            ids = []
            for n in range(count):
                job = await admin.add(f"job {n}: say done", ScheduleSpec(at=past), deliver=deliver)
                ids.append(job.id)
            return ids

    return asyncio.run(go())


def stop(process: subprocess.Popen[str]) -> str:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=30)
    return out + err


def delivered_keys(path: Path) -> list[str]:
    return MARKER.findall(path.read_text(encoding="utf-8")) if path.exists() else []


class Ledger:
    """The run ledger and submissions of the store the workers share."""

    def __init__(self, query: Callable[[str], list[tuple[Any, ...]]]) -> None:
        self.query = query

    def count(self, where: str = "TRUE") -> int:
        rows = self.query(f"SELECT count(*) FROM cron_runs WHERE {where}")
        return int(rows[0][0]) if rows else 0


def sqlite_ledger(path: Path) -> Ledger:
    def query(text: str) -> list[tuple[Any, ...]]:
        if not path.exists():
            return []
        with sqlite3.connect(path, timeout=10) as db:
            try:
                return db.execute(text.replace("TRUE", "1")).fetchall()
            except sqlite3.OperationalError:  # the workers have not migrated it yet
                return []

    return Ledger(query)


def postgres_ledger(url: str) -> Ledger:
    def query(text: str) -> list[tuple[Any, ...]]:
        with psycopg.connect(url) as conn:
            return conn.execute(text).fetchall()  # type: ignore[arg-type]

    return Ledger(query)


def kill_mid_turn(worker: subprocess.Popen[str], ledger: Ledger, running: str) -> set[str]:
    """SIGKILL `worker` while it holds a turn; the ids it held. Frozen first (SIGSTOP,
    waited for), so the rows read are the ones it held when it died: a turn that ended
    between the read and the kill made the test fail now and then. Between turns at the
    freeze, it is let go on and tried again."""
    for _ in range(50):
        wait_for(lambda: bool(ledger.query(running)), "the first worker to be mid-turn")
        worker.send_signal(signal.SIGSTOP)
        os.waitid(os.P_PID, worker.pid, os.WSTOPPED | os.WNOWAIT)
        held = {str(row[0]) for row in ledger.query(running)}
        if held:
            worker.send_signal(signal.SIGKILL)
            worker.wait(timeout=10)
            return held
        worker.send_signal(signal.SIGCONT)
    raise AssertionError("the first worker was never caught mid-turn in 50 tries")


def run_two_workers_with_a_kill(cli: Cli, server: OpenAIServer, ledger: Ledger) -> None:
    # Slow enough streams that the kill lands inside some turn.
    server.push(*[text_reply("done", chunk_size=1).paced(0.02) for _ in range(JOBS + 20)])
    ids = add_jobs(cli, JOBS, "file:cron.md")
    assert len(set(ids)) == JOBS
    first = cli.popen("worker")
    second = cli.popen("worker")
    out = ""
    try:
        wait_for(lambda: ledger.count() >= JOBS // 4, "the workers to claim slots")
        running = (
            "SELECT id FROM submissions WHERE state = 'running'"
            f" AND lease_owner LIKE '%:{first.pid}:%'"
        )
        held = kill_mid_turn(first, ledger, running)
        deliveries = cli.home / "deliveries" / "cron.md"
        wait_for(lambda: ledger.count("delivery = 'sent'") == JOBS, "every run to be delivered")
        out = stop(second)
    finally:
        for process in (first, second):
            if process.poll() is None:
                process.kill()
                process.communicate()
    assert ledger.count() == JOBS, out  # one ledger row per slot, whoever claimed it
    assert ledger.count("outcome = 'completed'") == JOBS, out
    subs = dict(ledger.query("SELECT id, attempts FROM submissions WHERE id LIKE 'cron:%'"))
    assert len(subs) == JOBS  # one submission per slot
    assert all(subs[sub_id] > 1 for sub_id in held)  # the killed turns, taken over
    keys = delivered_keys(deliveries)
    assert len(keys) == JOBS and len(set(keys)) == JOBS  # each delivered exactly once
    slots = {row[0] for row in ledger.query("SELECT slot_key FROM cron_runs")}
    assert {key.removeprefix("cron:") for key in keys} == slots
    assert {slot.split("@")[0] for slot in slots} == set(ids)


def test_two_sqlite_workers_run_100_slots_once_each_with_one_killed(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    cli = make_cli(
        tmp_path,
        {"OPENAI_BASE_URL": openai_server.base_url, "OPENAI_API_KEY": "test-key"},
        in_process=True,
    )
    cli.write_config("[store]\nlease_seconds = 2\n")
    run_two_workers_with_a_kill(cli, openai_server, sqlite_ledger(cli.home / "sessions.db"))


def test_two_postgres_workers_run_100_slots_once_each_with_one_killed(
    tmp_path: Path, openai_server: OpenAIServer, store_url: str
) -> None:
    cli = make_cli(
        tmp_path,
        {
            "OPENAI_BASE_URL": openai_server.base_url,
            "OPENAI_API_KEY": "test-key",
            "SEAM_STORE_URL": store_url,
        },
        in_process=True,
    )
    cli.write_config("[store]\nlease_seconds = 2\n")
    run_two_workers_with_a_kill(cli, openai_server, postgres_ledger(store_url))


@pytest.mark.realtime
def test_an_every_minute_job_is_delivered_by_a_worker_within_the_minute(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    """Real time, no injected clock: `--every` jobs are first due when added."""
    cli = make_cli(
        tmp_path,
        {"OPENAI_BASE_URL": openai_server.base_url, "OPENAI_API_KEY": "test-key"},
        in_process=True,
    )
    openai_server.push(text_reply("Nothing new in the inbox."))
    added = cli("cron", "add", "--every", "1m", "check my inbox", "--deliver", "file:out.md")
    assert added.returncode == 0, added.stderr
    job_id = added.stdout.strip()
    assert re.fullmatch(r"[0-9a-f]{8}", job_id)
    started = time.monotonic()
    worker = cli.popen("worker")
    out = cli.home / "deliveries" / "out.md"
    try:
        wait_for(lambda: bool(delivered_keys(out)), "the delivery", limit=60.0)
    finally:
        stop(worker)
    assert time.monotonic() - started < 60.0
    assert "Nothing new in the inbox." in out.read_text(encoding="utf-8")
    [key] = delivered_keys(out)
    assert key.startswith(f"cron:{job_id}@")
    runs = cli("cron", "runs", job_id)
    assert runs.returncode == 0 and "completed" in runs.stdout, runs.stderr
