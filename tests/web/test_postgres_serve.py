"""Two `seam serve` processes on one PostgreSQL store behave as one: a client streaming
from one sees the turn the other runs, and when the process running it is SIGKILLed the
other resumes the turn and the client's stream carries on to `done`. An approval POSTed to
the process that is not running the turn answers it (on PostgreSQL, and on one SQLite file
two processes share)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cli.test_postgres_workers import store_url  # noqa: F401 (a fixture)
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply
from tests.web.test_serve import SEAM


def start(env: dict[str, str], cwd: Path | None = None) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [*SEAM, "serve", "--port", "0"],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert first.startswith("seam serve: listening on "), first
    proc.stdout.readline()
    return proc, first.split()[-1].rstrip("/")


def test_a_stream_on_one_process_survives_the_death_of_the_one_running_the_turn(
    tmp_path: Path,
    openai_server: OpenAIServer,
    store_url: str,  # noqa: F811
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text("[store]\nlease_seconds = 2\n")
    env = {
        **os.environ,
        "SEAM_HOME": str(home),
        "OPENAI_BASE_URL": openai_server.base_url,
        "OPENAI_API_KEY": "test-key",
        "SEAM_STORE_URL": store_url,
    }
    key = subprocess.run(
        [*SEAM, "keys", "create", "pg"], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    headers = {"Authorization": f"Bearer {key}"}
    # The first process's model streams three pieces and then hangs; the resumed turn
    # gets the second reply.
    openai_server.push(text_reply("one two three four", chunk_size=4).stalled(after=3))
    openai_server.push(text_reply("resumed answer"))
    runner, runner_url = start(env)
    watcher, watcher_url = start(env)
    try:
        with httpx.Client(headers=headers, timeout=60) as client:
            made = client.post(f"{runner_url}/api/sessions", json={"name": "pg"})
            assert made.status_code == 201, made.text
            events: list[dict] = []
            with client.stream("GET", f"{watcher_url}/api/sessions/pg/events") as stream:
                # Posted to the runner only once the watcher's stream is open.
                posted = client.post(f"{runner_url}/api/sessions/pg/messages", json={"text": "go"})
                assert posted.status_code == 202
                kind = None
                for line in stream.iter_lines():
                    if line.startswith("event: "):
                        kind = line[7:]
                    elif line.startswith("id: "):
                        seq = int(line[4:])
                    elif line.startswith("data: "):
                        events.append({"id": seq, "event": kind, "data": json.loads(line[6:])})
                        if kind == "text_delta" and runner.poll() is None:
                            runner.send_signal(signal.SIGKILL)
                            runner.wait(timeout=10)
                        if kind == "done":
                            break
        kinds = [e["event"] for e in events]
        assert kinds[0] == "run_start" and kinds[-1] == "done"
        assert "resumed answer" in events[-1]["data"]["text"]
        ids = [e["id"] for e in events]
        assert ids == sorted(set(ids)), "no event twice, in order"
        streamed = "".join(e["data"]["text"] for e in events if e["event"] == "text_delta")
        assert streamed.startswith("one ") and streamed.endswith("resumed answer")
    finally:
        openai_server.release()
        for proc in (runner, watcher):
            if proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=20)


def read_events(lines: Iterator[str], until: str) -> Iterator[dict[str, Any]]:
    """SSE lines as {"id", "event", "data"} items, up to and including an `until` event."""
    kind, seq = None, 0
    for line in lines:
        if line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("id: "):
            seq = int(line[4:])
        elif line.startswith("data: "):
            yield {"id": seq, "event": kind, "data": json.loads(line[6:])}
            if kind == until:
                return


def lease_owner_pid(env: dict[str, str], home: Path) -> int:
    """The pid of the process holding the running submission's lease (`host:pid:start`)."""
    query = "SELECT lease_owner FROM submissions WHERE state = 'running'"
    if "SEAM_STORE_URL" in env:
        import psycopg

        with psycopg.connect(env["SEAM_STORE_URL"]) as conn:
            row = conn.execute(query).fetchone()
    else:
        import sqlite3

        with contextlib.closing(sqlite3.connect(home / "sessions.db")) as db:
            row = db.execute(query).fetchone()
    assert row is not None and row[0], row
    return int(str(row[0]).split(":")[1])


@pytest.mark.parametrize("backend", ["postgres", "sqlite"])
def test_an_approval_posted_to_the_other_process_answers_the_turn(
    tmp_path: Path, openai_server: OpenAIServer, request: pytest.FixtureRequest, backend: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    # Renewals (every third of the lease) are where a turn learns of an abort asked for
    # in another process.
    (home / "config.toml").write_text("[store]\nlease_seconds = 3\n")
    project = tmp_path / "project"
    (project / "build" / "obj").mkdir(parents=True)
    env = {
        **os.environ,
        "SEAM_HOME": str(home),
        "OPENAI_BASE_URL": openai_server.base_url,
        "OPENAI_API_KEY": "test-key",
    }
    if backend == "postgres":
        env["SEAM_STORE_URL"] = request.getfixturevalue("store_url")
    else:
        env.pop("SEAM_STORE_URL", None)  # both processes on $SEAM_HOME's SQLite file
    key = subprocess.run(
        [*SEAM, "keys", "create", "approver"], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    openai_server.push(
        tool_call_reply([("terminal", json.dumps({"command": "rm -r build"}))]),
        text_reply("Removed."),
        tool_call_reply([("terminal", json.dumps({"command": "rm -r elsewhere"}))]),
    )
    one, one_url = start(env, project)
    two, two_url = start(env, project)
    by_pid = {one.pid: one_url, two.pid: two_url}
    try:
        with httpx.Client(headers={"Authorization": f"Bearer {key}"}, timeout=60) as client:
            assert client.post(f"{one_url}/api/sessions", json={"name": "ap"}).status_code == 201
            with client.stream("GET", f"{two_url}/api/sessions/ap/events") as stream:
                lines = stream.iter_lines()
                posted = client.post(f"{one_url}/api/sessions/ap/messages", json={"text": "rm"})
                assert posted.status_code == 202, posted.text
                asked = list(read_events(lines, "tool_approval_required"))[-1]
                call_id = asked["data"]["call_id"]
                # Whichever process claimed the turn, the answer goes to the other one.
                running_url = by_pid[lease_owner_pid(env, home)]
                other_url = two_url if running_url == one_url else one_url
                path = f"/api/sessions/ap/approvals/{call_id}"
                answer = client.post(f"{other_url}{path}", json={"decision": "once"})
                assert answer.status_code == 200, answer.text
                # The first answer won, wherever the next one is sent.
                for url in (running_url, other_url):
                    late = client.post(f"{url}{path}", json={"decision": "deny"})
                    assert late.status_code == 409, late.text
                    assert "already answered" in late.json()["error"]["message"]
                rest = list(read_events(lines, "done"))
                # Cancel works the same way: asked of the process not running the turn (here
                # one waiting for an approval).
                client.post(f"{one_url}/api/sessions/ap/messages", json={"text": "more"})
                list(read_events(lines, "tool_approval_required"))
                other_url = two_url if by_pid[lease_owner_pid(env, home)] == one_url else one_url
                cancelled = client.post(f"{other_url}/api/sessions/ap/cancel")
                assert cancelled.status_code == 200 and cancelled.json()["cancelled"]
                stopped = list(read_events(lines, "done"))[-1]
                assert stopped["data"]["finish_reason"] in ("cancelled", "aborted"), stopped
        response = next(e for e in rest if e["event"] == "tool_approval_response")
        assert response["data"]["decision"] == "once"
        end = next(e for e in rest if e["event"] == "tool_end")
        assert not end["data"]["is_error"], end
        assert rest[-1]["data"]["text"] == "Removed."
        assert not (project / "build").exists()
    finally:
        openai_server.release()
        for proc in (one, two):
            if proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=20)
