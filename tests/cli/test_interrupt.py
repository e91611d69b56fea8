"""Ctrl-C means stop, SIGTERM means hand back: real signals on a real `seam` process.

A `seam run` or chat turn stopped with Ctrl-C settles its submission aborted (partial text
kept, marked interrupted), so a following `seam resume` has nothing to do and the model is
never called again; a second Ctrl-C exits at once. `seam worker` stops on SIGTERM and
hands the submission it was running back to the queue, where `seam resume` finishes it.
"""

from __future__ import annotations

import asyncio
import json
import os
import pty
import signal
import subprocess
import time
from collections.abc import Callable
from typing import Any

import pytest

from seam.wiring import create_runtime
from seam.wiring.settings import load_settings
from tests.cli.conftest import SEAM, Cli
from tests.support.openai_server import OpenAIServer, error_reply, text_reply, tool_call_reply

pytestmark = pytest.mark.in_process

WAIT_LIMIT = 20.0
# A stopped turn must be gone this soon after the signal (the grace is 1 s).
STOP_BOUND = 8.0


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_LIMIT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def shown(cli: Cli, name: str) -> dict[str, Any]:
    result = cli("sessions", "show", name, "--json")
    assert result.returncode == 0, result.stderr
    body: dict[str, Any] = json.loads(result.stdout)
    return body


def popen(cli: Cli, *args: str, stdin: int = subprocess.PIPE) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(SEAM), *args],
        cwd=cli.project,
        env=cli.env,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        encoding="utf-8",
    )


def read_json_until(process: subprocess.Popen[str], kind: str) -> list[dict[str, Any]]:
    assert process.stdout is not None
    seen: list[dict[str, Any]] = []
    while not any(e["type"] == kind for e in seen):
        line = process.stdout.readline()
        assert line, f"seam exited before a {kind} event"
        seen.append(json.loads(line))
    return seen


def assert_nothing_to_resume(cli: Cli, server: OpenAIServer) -> None:
    requests = len(server.chat_requests)
    resumed = cli("resume")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout == ""
    assert "nothing to resume" in resumed.stderr
    assert len(server.chat_requests) == requests  # the model was not called again


def test_ctrl_c_settles_the_run_aborted_and_resume_does_nothing(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    openai_server.push(text_reply("Partial answer then more", chunk_size=8).stalled(after=3))
    process = popen(cli, "run", "--json", "--session", "stopped", "Tell me a long story")
    read_json_until(process, "text_delta")

    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)

    assert time.monotonic() - started < STOP_BOUND
    assert process.returncode == 130
    assert err.splitlines() == ["seam: cancelled"]
    last = json.loads(out.splitlines()[-1])
    assert (last["type"], last["code"], last["outcome"]) == ("exit", 130, "cancelled")
    body = shown(cli, "stopped")
    [sub] = body["submissions"]
    assert (sub["state"], sub["outcome"]) == ("settled", "aborted")
    assert body["messages"][-1]["interrupted"] is True
    assert body["messages"][-1]["content"].startswith("Partial ")
    assert_nothing_to_resume(cli, openai_server)


def test_ctrl_c_during_a_retry_back_off_aborts_at_once(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    # The provider is told to wait 20 s before its next attempt (`seam run` retries in the
    # provider, visibly). Ctrl-C must end the wait, and not leave the turn queued for later.
    openai_server.push(error_reply(429, headers={"Retry-After": "20"}), text_reply("unused"))
    process = popen(cli, "run", "--session", "flaky", "hello")
    assert process.stderr is not None
    retry = process.stderr.readline()
    assert retry.startswith("retrying in 20 s (attempt 2 of 4): HTTP 429"), retry

    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)

    assert time.monotonic() - started < STOP_BOUND
    assert process.returncode == 130, err
    assert err.splitlines()[-1] == "seam: cancelled"
    [sub] = shown(cli, "flaky")["submissions"]
    assert (sub["state"], sub["outcome"]) == ("settled", "aborted")
    assert len(openai_server.chat_requests) == 1
    assert_nothing_to_resume(cli, openai_server)


def test_a_second_ctrl_c_exits_at_once_and_still_settles(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    # A turn waiting for an approval answer on a terminal where nobody types (a pipe is
    # nobody: its turn would not wait).
    (cli.project / "build").mkdir()
    command = json.dumps({"command": "rm -r build"})
    openai_server.push(tool_call_reply([("terminal", command)]), text_reply("unused"))
    master, slave = pty.openpty()
    try:
        process = popen(cli, "run", "--json", "--session", "twice", "remove build", stdin=slave)
        read_json_until(process, "tool_approval_required")

        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    finally:
        os.close(master)
        os.close(slave)

    assert time.monotonic() - started < STOP_BOUND
    assert process.returncode == 130, err
    assert (cli.project / "build").is_dir()
    body = shown(cli, "twice")
    [sub] = body["submissions"]
    assert (sub["state"], sub["outcome"]) == ("settled", "aborted")
    assert_nothing_to_resume(cli, openai_server)
    assert len(openai_server.chat_requests) == 1


def test_ctrl_c_in_chat_stops_that_turn_only(cli: Cli, openai_server: OpenAIServer) -> None:
    openai_server.push(
        text_reply("Once upon a time there was", chunk_size=5).stalled(after=3),
        text_reply("Second answer."),
    )
    process = popen(cli, "chat", "--session", "talk")
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("tell me a story\n")
    process.stdin.flush()
    wait_for(lambda: len(openai_server.chat_requests) >= 1, "the first turn")
    # The stalled reply has streamed its first pieces (read as they come: the line
    # they are on does not end until the turn does).
    before = ""
    while "Once" not in before:
        piece = os.read(process.stdout.fileno(), 4096)
        assert piece, "chat exited early"
        before += piece.decode()

    process.send_signal(signal.SIGINT)
    process.stdin.write("and another\n/exit\n")
    process.stdin.flush()
    out, err = process.communicate(timeout=30)
    out = before + out

    assert process.returncode == 0, err
    assert "(cancelled)" in out and "Second answer." in out, out
    body = shown(cli, "talk")
    assert [s["outcome"] for s in body["submissions"]] == ["aborted", "completed"]
    interrupted = [m for m in body["messages"] if m.get("interrupted")]
    assert len(interrupted) == 1 and interrupted[0]["content"].startswith("Once")
    assert_nothing_to_resume(cli, openai_server)


def submit(cli: Cli, name: str, text: str) -> str:
    async def go() -> str:
        settings = load_settings(cli.env, home=cli.home, working_dir=cli.project)
        async with create_runtime(settings=settings) as runtime:
            return (await runtime.submit(name, text)).id

    return asyncio.run(go())


def test_sigterm_hands_the_running_submission_back_to_the_queue(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    submit(cli, "queued", "tell me a story")
    openai_server.push(text_reply("A story that stalls", chunk_size=4).stalled(after=3))
    worker = popen(cli, "worker", "--grace", "0.5")
    wait_for(lambda: len(openai_server.chat_requests) >= 1, "the worker's model call")

    started = time.monotonic()
    worker.send_signal(signal.SIGTERM)
    _, err = worker.communicate(timeout=30)

    assert time.monotonic() - started < STOP_BOUND
    assert worker.returncode == 0, err
    assert "stopping" in err and "stopped" in err
    [sub] = shown(cli, "queued")["submissions"]
    assert sub["state"] == "queued"  # handed back, not left leased to a dead worker

    # Another process finishes it, from where it was cut off.
    openai_server.push(text_reply("The end."))
    resumed = cli("resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "The end." in resumed.stdout
    body = shown(cli, "queued")
    assert [s["outcome"] for s in body["submissions"]] == ["completed"]
    messages = body["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "assistant"]
    assert messages[1]["interrupted"] is True and messages[1]["content"].startswith("A story")
    assert messages[2]["content"] == "The end."


def test_an_idle_worker_stops_on_sigterm_at_once(cli: Cli) -> None:
    worker = popen(cli, "worker")
    assert worker.stderr is not None
    assert "waiting for submissions" in worker.stderr.readline()

    started = time.monotonic()
    worker.send_signal(signal.SIGTERM)
    _, err = worker.communicate(timeout=30)

    assert time.monotonic() - started < STOP_BOUND
    assert worker.returncode == 0, err
    assert "stopped" in err


def test_sigterm_lets_a_turn_that_finishes_within_the_grace_settle(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    submit(cli, "finishing", "a short question")
    openai_server.push(text_reply("A short answer.", chunk_size=4).stalled(after=2))
    worker = popen(cli, "worker", "--grace", "10")
    wait_for(lambda: len(openai_server.chat_requests) >= 1, "the worker's model call")

    worker.send_signal(signal.SIGTERM)
    assert worker.stderr is not None
    while "stopping" not in (line := worker.stderr.readline()):
        assert line, "the worker exited before it said it was stopping"
    openai_server.release()  # the answer arrives well within the grace
    _, err = worker.communicate(timeout=30)

    assert worker.returncode == 0, err
    [sub] = shown(cli, "finishing")["submissions"]
    assert (sub["state"], sub["outcome"], sub["result"]) == (
        "settled",
        "completed",
        "A short answer.",
    )
    assert len(openai_server.chat_requests) == 1
