"""Two `seam serve` processes on one PostgreSQL store behave as one: a client streaming
from one sees the turn the other runs, and when the process running it is SIGKILLed the
other resumes the turn and the client's stream carries on to `done`."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import httpx

from tests.cli.test_postgres_workers import store_url  # noqa: F401 (a fixture)
from tests.support.openai_server import OpenAIServer, text_reply
from tests.web.test_serve import SEAM


def start(env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [*SEAM, "serve", "--port", "0"],
        env=env,
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
    import os

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
