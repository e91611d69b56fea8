"""Several `seam worker` processes share one PostgreSQL queue; a worker killed mid-turn
has its submission finished by another once its lease runs out."""

from __future__ import annotations

import asyncio
import json
import secrets
import signal
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
from seam.wiring.settings import load_settings
from tests.cli.conftest import SEAM, Cli, make_cli
from tests.support.openai_server import OpenAIServer, text_reply

pytestmark = pytest.mark.in_process

LEASE = 2.0
WAIT_LIMIT = 60.0


@pytest.fixture
def store_url(postgres_url: str) -> Iterator[str]:
    """A database of its own for this test, as a postgresql:// URL (what users configure)."""
    name = f"seam_workers_{secrets.token_hex(4)}"
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


@pytest.fixture
def workers_cli(tmp_path: Path, openai_server: OpenAIServer, store_url: str) -> Cli:
    cli = make_cli(
        tmp_path,
        {
            "OPENAI_BASE_URL": openai_server.base_url,
            "OPENAI_API_KEY": "test-key",
            "SEAM_STORE_URL": store_url,
        },
        in_process=True,
    )
    cli.write_config(f"[store]\nlease_seconds = {LEASE}\n")
    return cli


def rows(url: str, query: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(query).fetchall()


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_LIMIT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def submit(cli: Cli, questions: dict[str, str]) -> dict[str, str]:
    """Queue one question per session through the Python API; returns name -> id."""

    async def go() -> dict[str, str]:
        settings = load_settings(cli.env, home=cli.home, working_dir=cli.project)
        runtime = create_runtime(settings=settings)
        try:
            await runtime.open()
            ids = {}
            for name, text in questions.items():
                ids[name] = (await runtime.submit(name, text)).id
            return ids
        finally:
            await runtime.aclose()

    return asyncio.run(go())


def transcript(cli: Cli, name: str) -> dict[str, Any]:
    shown = cli("sessions", "show", name, "--json")
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)


def stop(process: subprocess.Popen[str]) -> str:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=30)
    return out + err


def on_another_machine(cli: Cli, *args: str) -> subprocess.Popen[str]:
    """`seam` in its own UTS namespace with another hostname: to the store and to the
    other workers it is a worker on another machine (its process cannot be checked)."""
    return subprocess.Popen(
        ["unshare", "--uts", "sh", "-c", 'hostname machine-b && exec "$0" "$@"', str(SEAM), *args],
        cwd=cli.project,
        env=cli.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        encoding="utf-8",
    )


@pytest.mark.parametrize("where", ["same-machine", "other-machine"])
def test_a_killed_workers_submission_is_finished_by_another(
    where: str, workers_cli: Cli, openai_server: OpenAIServer, store_url: str
) -> None:
    """On one machine the killed worker's process is known dead and its work is taken
    over at once; from another machine only the lease says so, and it must run out."""
    cli = workers_cli
    if where == "same-machine":
        cli.write_config("[store]\nlease_seconds = 30\n")
    names = [f"s{n}" for n in range(5)]
    ids = submit(cli, {name: f"question {name}" for name in names})
    # The first request stalls mid-answer; every later one answers at once.
    openai_server.push(text_reply("Partial answer that never ends", chunk_size=3).stalled(after=4))
    openai_server.push(*[text_reply("answer") for _ in names])

    first = cli.popen("worker") if where == "same-machine" else on_another_machine(cli, "worker")
    second: subprocess.Popen[str] | None = None
    try:
        # The first worker has streamed (and stored) part of its answer: kill it there.
        wait_for(
            lambda: (
                rows(store_url, "SELECT count(*) FROM events WHERE type = 'text_delta'")[0][0] > 0
            ),
            "the first worker to stream",
        )
        [(victim, owner, expires)] = rows(
            store_url,
            "SELECT id, lease_owner, lease_expires_at FROM submissions WHERE state = 'running'",
        )
        assert owner.startswith("machine-b:") == (where == "other-machine")
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        openai_server.release()

        second = cli.popen("worker")
        wait_for(
            lambda: (
                rows(store_url, "SELECT count(*) FROM submissions WHERE state <> 'settled'")[0][0]
                == 0
            ),
            "every submission to settle",
        )
        output = stop(second)
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.kill()
                process.communicate()

    subs = {
        row[0]: row[1:]
        for row in rows(store_url, "SELECT id, state, outcome, attempts FROM submissions")
    }
    assert set(subs) == set(ids.values())
    for sid, (state, outcome, attempts) in subs.items():
        assert (state, outcome) == ("settled", "completed"), output
        assert attempts == (2 if sid == victim else 1)
    # The second attempt began only once the first worker was known gone: at once on the
    # same machine (well inside its 30 s lease), after the lease ran out for a worker on
    # another machine (settlement times come from the same clock as leases).
    [(settled_at,)] = rows(store_url, f"SELECT settled_at FROM submissions WHERE id = '{victim}'")
    if where == "same-machine":
        assert settled_at < expires
    else:
        assert settled_at >= expires
    for name in names:
        body = transcript(cli, name)
        messages = body["messages"]
        assert [m["role"] for m in messages].count("user") == 1
        finals = [m for m in messages if m["role"] == "assistant" and not m["interrupted"]]
        assert [m["content"] for m in finals] == ["answer"]
        [sub] = body["submissions"]
        assert sub["result"] == "answer"
    victim_name = next(n for n, i in ids.items() if i == victim)
    cut = [m for m in transcript(cli, victim_name)["messages"] if m["interrupted"]]
    assert len(cut) == 1 and "Partial answer that never ends".startswith(cut[0]["content"])


def test_two_workers_share_the_queue_without_running_anything_twice(
    workers_cli: Cli, openai_server: OpenAIServer, store_url: str
) -> None:
    cli = workers_cli
    questions = {f"q{n}": f"question {n}" for n in range(12)}
    openai_server.push(*[text_reply("answer") for _ in questions])
    workers = [cli.popen("worker"), cli.popen("worker")]
    try:
        submit(cli, questions)  # the workers are already waiting: NOTIFY wakes them
        wait_for(
            lambda: (
                rows(store_url, "SELECT count(*) FROM submissions WHERE state = 'settled'")[0][0]
                == len(questions)
            ),
            "every submission to settle",
        )
    finally:
        outputs = [stop(w) for w in workers]
    assert rows(store_url, "SELECT DISTINCT attempts, outcome FROM submissions") == [
        (1, "completed")
    ], outputs
    assert len(openai_server.chat_requests) == len(questions)
    assert openai_server.pending == 0


def test_a_worker_with_concurrency_runs_two_sessions_turns_at_once(
    workers_cli: Cli, openai_server: OpenAIServer, store_url: str
) -> None:
    """`seam worker --concurrency 2`: while one session's model call is stalled, the
    worker starts the other session's turn; both settle once the stall is released."""
    cli = workers_cli
    openai_server.push(text_reply("first answer", chunk_size=3).stalled(after=2))
    openai_server.push(text_reply("second answer"))
    submit(cli, {"one": "first question", "two": "second question"})
    worker = cli.popen("worker", "--concurrency", "2")
    try:
        # The second call reaches the server while the first is still stalled.
        wait_for(lambda: len(openai_server.chat_requests) == 2, "two model calls at once")
        openai_server.release()
        wait_for(
            lambda: (
                rows(store_url, "SELECT count(*) FROM submissions WHERE state = 'settled'")[0][0]
                == 2
            ),
            "both submissions to settle",
        )
    finally:
        output = stop(worker)
    answers = sorted(
        m["content"]
        for name in ("one", "two")
        for m in transcript(cli, name)["messages"]
        if m["role"] == "assistant"
    )
    assert answers == ["first answer", "second answer"], output
    assert rows(store_url, "SELECT DISTINCT attempts, outcome FROM submissions") == [
        (1, "completed")
    ]


def test_doctor_checks_the_postgres_store(workers_cli: Cli, store_url: str) -> None:
    cli = workers_cli
    done = cli("doctor")
    assert "session store: PostgreSQL at postgresql://" in done.stdout
    assert "seam:" not in done.stdout  # no password or failure in the report
    assert store_url not in done.stdout  # the URL is shown without its password
    cli.env["SEAM_STORE_URL"] = store_url.rsplit("/", 1)[0] + "/no_such_database"
    broken = cli("doctor")
    assert broken.returncode != 0
    assert "cannot connect to PostgreSQL" in broken.stdout
