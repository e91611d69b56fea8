"""`seam run`: one turn through the real console script, against a loopback provider."""

from __future__ import annotations

import itertools
import json
import signal

import pytest

from tests.cli.conftest import Cli, json_lines, sent_messages, tool_messages
from tests.support.openai_server import OpenAIServer, error_reply, text_reply, tool_call_reply

pytestmark = pytest.mark.in_process

NOTE = "The meeting is at 3pm."
ANSWER = "The note says the meeting is at 3pm."


def test_run_reads_a_file_with_a_tool_and_prints_only_the_answer(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    (cli.project / "note.txt").write_text(NOTE)
    openai_server.push(tool_call_reply([("read_file", '{"path": "note.txt"}')]), text_reply(ANSWER))

    result = cli("run", "What does note.txt say?")

    assert result.returncode == 0, result.stderr
    assert result.stdout == ANSWER + "\n"
    assert result.stderr == ""  # tool activity is shown only when stderr is a terminal
    assert len(openai_server.chat_requests) == 2
    [tool_result] = tool_messages(openai_server, 1)
    assert NOTE in tool_result["content"]
    # Nothing written outside SEAM_HOME: the project holds only the note, HOME only .seam.
    assert [p.name for p in cli.project.iterdir()] == ["note.txt"]
    assert [p.name for p in cli.home.parent.iterdir()] == [".seam"]


def test_json_streams_every_event_in_order(cli: Cli, openai_server: OpenAIServer) -> None:
    (cli.project / "note.txt").write_text(NOTE)
    openai_server.push(tool_call_reply([("read_file", '{"path": "note.txt"}')]), text_reply(ANSWER))

    result = cli("run", "--json", "What does note.txt say?")

    assert result.returncode == 0, result.stderr
    events = json_lines(result.stdout)
    types = [e["type"] for e in events]
    assert types[0] == "run_start"
    assert types[-2:] == ["done", "exit"]
    assert types.count("done") == 1
    assert types.index("tool_start") < types.index("tool_end")
    assert "text_delta" in types
    exit_line = events.pop()
    assert exit_line == {
        "type": "exit",
        "code": 0,
        "outcome": "completed",
        "message": "",
        "submission_id": exit_line["submission_id"],
    }
    seqs = [e["seq"] for e in events]
    assert all(a < b for a, b in itertools.pairwise(seqs))
    assert len({(e["session_key"], e["turn_id"]) for e in events}) == 1
    tool_end = events[types.index("tool_end")]
    assert tool_end["name"] == "read_file" and NOTE in tool_end["result"]
    assert events[-1]["text"] == ANSWER
    assert events[-1]["finish_reason"] == "stop"


def test_auth_failure_is_one_line_on_stderr(cli: Cli, openai_server: OpenAIServer) -> None:
    openai_server.push(
        error_reply(401, {"error": {"message": "Incorrect API key provided", "type": "auth"}})
    )

    result = cli("run", "hello")

    assert result.returncode == 3  # the provider failed
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("seam: ")
    assert "auth" in lines[0] and "OPENAI_API_KEY" in lines[0]


def test_json_failure_still_ends_with_done_and_exits_non_zero(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    openai_server.push(error_reply(401))

    result = cli("run", "--json", "hello")

    assert result.returncode == 3
    events = json_lines(result.stdout)
    assert [e["type"] for e in events][-3:] == ["error", "done", "exit"]
    assert events[-2]["finish_reason"] == "error"
    assert events[-1]["code"] == 3 and events[-1]["outcome"] == "provider_error"
    assert result.stderr.startswith("seam: ")


def test_reading_outside_the_project_is_refused(cli: Cli, openai_server: OpenAIServer) -> None:
    secret = "launch code 0000"
    (cli.project.parent / "secret.txt").write_text(secret)
    openai_server.push(
        tool_call_reply([("read_file", '{"path": "../secret.txt"}')]),
        text_reply("I may not read that file."),
    )

    result = cli("run", "Read ../secret.txt")

    assert result.returncode == 0, result.stderr
    [tool_result] = tool_messages(openai_server, 1)
    assert "refused" in tool_result["content"]
    assert secret not in json.dumps(openai_server.chat_requests[1].body)
    assert secret not in result.stdout


def test_prompt_from_stdin_and_model_override(cli: Cli, openai_server: OpenAIServer) -> None:
    openai_server.push(text_reply("Piped."))

    result = cli("run", "--model", "other-model", "-", stdin="a question from a pipe\n")

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Piped.\n"
    body = openai_server.chat_requests[0].body
    assert body["model"] == "other-model"
    assert sent_messages(openai_server, 0)[-1]["content"] == "a question from a pipe\n"


def test_empty_prompt_is_a_usage_error(cli: Cli, openai_server: OpenAIServer) -> None:
    for args, stdin in ((("run", "  "), None), (("run", "-"), "")):
        result = cli(*args, stdin=stdin)
        assert result.returncode == 2
        assert result.stdout == ""
        assert result.stderr.startswith("seam: ") and "empty" in result.stderr
    assert openai_server.chat_requests == []


def test_bad_session_and_personality_are_usage_errors(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    result = cli("run", "--session", "task:parent:1", "hi")
    assert result.returncode == 2
    assert "reserved" in result.stderr and "task:" in result.stderr

    result = cli("run", "--personality", "pirate", "hi")
    assert result.returncode == 2
    assert "unknown personality 'pirate'" in result.stderr
    assert openai_server.chat_requests == []


def test_invalid_config_names_the_file(cli: Cli, openai_server: OpenAIServer) -> None:
    path = cli.write_config("[model\nprovider = 'openai'\n")
    result = cli("run", "hi")
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith(f"seam: {path}") and "TOML" in result.stderr

    cli.write_config("[model]\ncolour = 'blue'\n")
    result = cli("run", "hi")
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1
    assert str(path) in result.stderr and "model.colour" in result.stderr
    assert openai_server.chat_requests == []


def test_ctrl_c_cancels_the_turn_and_keeps_the_partial_answer(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    # Two text pieces arrive, then the model stalls until the test ends.
    openai_server.push(text_reply("Partial answer then more", chunk_size=8).stalled(after=3))

    process = cli.popen("run", "--json", "--session", "stopped", "Tell me a long story")
    assert process.stdout is not None
    seen: list[dict[str, object]] = []
    while not any(e["type"] == "text_delta" for e in seen):
        line = process.stdout.readline()
        assert line, "seam exited before streaming any text"
        seen.append(json.loads(line))
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)

    assert process.returncode == 130
    assert stderr.splitlines() == ["seam: cancelled"]
    shown = json.loads(cli("sessions", "show", "stopped", "--json").stdout)
    last = shown["messages"][-1]
    assert last["role"] == "assistant" and last["interrupted"] is True
    assert last["content"].startswith("Partial ")
