"""Kill a real `seam run` with SIGKILL at many points of a turn; `seam resume` settles it.

Each case scripts the loopback model so the turn stops at a known point (a reply that
stalls), waits until the process has provably reached that point (the server saw the
request, or the event log holds the event), kills it, then resumes in a new process.
After the resume, every submission is settled exactly once, the transcript is valid and
everything written before the kill is still there.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from seam.core.coordinator import CUT_OFF_NOTE, UNKNOWN_OUTCOME
from tests.cli.conftest import Cli, sent_messages
from tests.support.openai_server import OpenAIServer, Reply, text_reply, tool_call_reply

pytestmark = pytest.mark.in_process

SESSION = "crashy"
PROMPT = "What does note.txt say?"
ANSWER = "The note says hello."
READ_NOTE = ("read_file", json.dumps({"path": "note.txt"}))
ECHO = ("terminal", json.dumps({"command": "echo hello"}))
WAIT_LIMIT = 20.0


@dataclass
class Watch:
    server: OpenAIServer
    db: Path

    def requests(self) -> int:
        return len(self.server.chat_requests)

    def events(self) -> list[tuple[str, str]]:
        if not self.db.exists():
            return []
        with sqlite3.connect(f"file:{self.db}?mode=ro", uri=True) as db:
            try:
                return db.execute("SELECT type, payload FROM events ORDER BY seq").fetchall()
            except sqlite3.OperationalError:  # not migrated yet
                return []

    def streamed_after(self, kind: str | None) -> bool:
        """Some text was streamed (and stored) after the last event of `kind`."""
        seen = kind is None
        for type_, _ in self.events():
            if type_ == kind:
                seen = True
            elif type_ == "text_delta" and seen:
                return True
        return False

    def has_event(self, kind: str) -> bool:
        return any(type_ == kind for type_, _ in self.events())


@dataclass
class Case:
    id: str
    before_kill: list[Reply]
    kill_when: Callable[[Watch], bool]
    after_kill: list[Reply]
    check: Callable[[list[dict[str, Any]], OpenAIServer, int], None] = field(
        default=lambda messages, server, first_resumed: None
    )


def _cut_off_text_kept(messages: list[dict[str, Any]], server: OpenAIServer, first: int) -> None:
    interrupted = [m for m in messages if m["role"] == "assistant" and m["interrupted"]]
    assert len(interrupted) == 1 and interrupted[0]["content"], messages
    assert ANSWER.startswith(interrupted[0]["content"]) or "Let me" in interrupted[0]["content"]
    body = server.chat_requests[first].body
    assert CUT_OFF_NOTE in body["messages"][0]["content"]


def _unknown_outcome(messages: list[dict[str, Any]], server: OpenAIServer, first: int) -> None:
    results = [m for m in messages if m["role"] == "tool"]
    assert [r["content"] for r in results] == [UNKNOWN_OUTCOME]
    assert any(m["role"] == "tool" for m in sent_messages(server, first))


def _one_read(messages: list[dict[str, Any]], server: OpenAIServer, first: int) -> None:
    results = [m for m in messages if m["role"] == "tool"]
    assert len(results) == 1 and "hello" in results[0]["content"]


def _read_again(messages: list[dict[str, Any]], server: OpenAIServer, first: int) -> None:
    _one_read(messages, server, first)
    assert not any(m["interrupted"] for m in messages), messages
    body = server.chat_requests[first].body
    assert CUT_OFF_NOTE not in body["messages"][0]["content"]
    assert any(m["role"] == "tool" for m in sent_messages(server, first))


CASES = [
    Case(
        "before-the-model-answers",
        [text_reply(ANSWER).stalled(0)],
        lambda w: w.requests() == 1,
        [tool_call_reply([READ_NOTE]), text_reply(ANSWER)],
        _one_read,
    ),
    Case(
        "mid-stream",
        [text_reply("Let me look at the note first.", chunk_size=3).stalled(after=5)],
        lambda w: w.streamed_after(None),
        [text_reply(ANSWER)],
        _cut_off_text_kept,
    ),
    Case(
        "after-a-tool-call",
        [tool_call_reply([("terminal", json.dumps({"command": "sleep 60"}))])],
        lambda w: w.has_event("tool_start"),
        [text_reply(ANSWER)],
        _unknown_outcome,
    ),
    Case(
        "after-a-tool-result",
        [tool_call_reply([READ_NOTE]), text_reply(ANSWER).stalled(0)],
        lambda w: w.requests() == 2,
        [text_reply(ANSWER)],
        _one_read,
    ),
    Case(
        # A tool that may not run twice: its result is stored before the model goes on.
        "mid-final-answer",
        [tool_call_reply([ECHO]), text_reply(ANSWER, chunk_size=2).stalled(after=5)],
        lambda w: w.streamed_after("tool_end"),
        [text_reply(ANSWER)],
        _cut_off_text_kept,
    ),
    Case(
        # A quick read (it may run again): its result was held for the next write and
        # died with the process, so the read runs again and the model answers afresh.
        "mid-final-answer-after-a-held-result",
        [tool_call_reply([READ_NOTE]), text_reply(ANSWER, chunk_size=2).stalled(after=5)],
        lambda w: w.streamed_after("tool_end"),
        [text_reply(ANSWER)],
        _read_again,
    ),
]


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_LIMIT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def transcript(cli: Cli) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    shown = cli("sessions", "show", SESSION, "--json")
    assert shown.returncode == 0, shown.stderr
    body = json.loads(shown.stdout)
    assert body["key"] == f'agent-session:["local","default","{SESSION}"]'
    return body["messages"], body["submissions"]


def assert_valid(messages: list[dict[str, Any]], submissions: int) -> None:
    """Every tool call has exactly one result; one user message per submission; no
    assistant text stored twice."""
    assert [m["role"] for m in messages].count("user") == submissions
    calls = [c["id"] for m in messages for c in m["tool_calls"]]
    results = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert sorted(calls) == sorted(results), messages
    texts = [
        m["content"]
        for m in messages
        if m["role"] == "assistant" and m["content"] and not m["interrupted"]
    ]
    assert len(texts) == len(set(texts)), texts


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_sigkill_then_resume_settles_exactly_once(
    case: Case, cli: Cli, openai_server: OpenAIServer
) -> None:
    (cli.project / "note.txt").write_text("hello\n", encoding="utf-8")
    watch = Watch(openai_server, cli.home / "sessions.db")
    openai_server.push(*case.before_kill)
    process = cli.popen("run", "--session", SESSION, PROMPT)
    try:
        wait_for(lambda: case.kill_when(watch) or process.poll() is not None, case.id)
        assert process.poll() is None, process.communicate()
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()
    openai_server.release()
    written, subs = transcript(cli)
    assert [s["state"] for s in subs] == ["running"]

    first_resumed = len(openai_server.chat_requests)
    openai_server.push(*case.after_kill)
    resumed = cli("resume", "--json")
    assert resumed.returncode == 0, resumed.stderr
    [line] = [json.loads(x) for x in resumed.stdout.splitlines()]
    assert (line["session"], line["outcome"], line["result"]) == (SESSION, "completed", ANSWER)

    messages, subs = transcript(cli)
    assert messages[: len(written)] == written  # nothing already written is lost
    assert_valid(messages, submissions=1)
    [sub] = subs
    assert (sub["state"], sub["outcome"], sub["attempts"]) == ("settled", "completed", 2)
    case.check(messages, openai_server, first_resumed)
    assert openai_server.pending == 0

    # Settled exactly once: a second resume finds nothing and asks the model nothing.
    requests = len(openai_server.chat_requests)
    again = cli("resume", "--json")
    assert again.returncode == 0 and again.stdout == ""
    assert len(openai_server.chat_requests) == requests
