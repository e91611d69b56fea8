"""`seam sessions list/show/search` over what a real `seam run` stored."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import Cli
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply

pytestmark = pytest.mark.in_process


def test_list_show_and_search_find_a_run(cli: Cli, openai_server: OpenAIServer) -> None:
    (cli.project / "note.txt").write_text("The meeting is at 3pm.")
    openai_server.push(
        tool_call_reply([("read_file", '{"path": "note.txt"}')]),
        text_reply("The meeting is at 3pm, says the note."),
        text_reply("Another answer."),
    )
    question = "What does note.txt say about the meeting?"
    assert cli("run", "--session", "demo", question).returncode == 0
    assert cli("run", "--session", "later", "Something else").returncode == 0

    listed = cli("sessions", "list")
    assert listed.returncode == 0, listed.stderr
    rows = [line.split() for line in listed.stdout.splitlines()[1:]]
    assert [row[0] for row in rows] == ["later", "demo"]  # newest first
    # name, title (from the first message; cut to fit the line), personality, messages, date
    assert rows[1][1:3] == ["What", "does"]
    assert rows[1][-4:-2] == ["default", "4"]
    limited = cli("sessions", "list", "--limit", "1")
    assert [line.split()[0] for line in limited.stdout.splitlines()[1:]] == ["later"]

    shown = cli("sessions", "show", "demo")
    assert shown.returncode == 0, shown.stderr
    assert f"you: {question}" in shown.stdout
    assert '⚙ read_file {"path": "note.txt"}' in shown.stdout
    assert "The meeting is at 3pm." in shown.stdout  # the tool result, compactly
    assert "seam: The meeting is at 3pm, says the note." in shown.stdout

    as_json = json.loads(cli("sessions", "show", "demo", "--json").stdout)
    assert set(as_json) == {"key", "name", "messages", "submissions", "usage"}
    [submission] = as_json["submissions"]
    assert (submission["state"], submission["outcome"], submission["attempts"]) == (
        "settled",
        "completed",
        1,
    )
    # Two model calls with the token counts the server reported, priced as the default
    # model (gpt-4o-mini) that the requests named.
    assert as_json["usage"]["calls"] == 2
    assert as_json["usage"]["input_tokens"] == 20 + 12
    assert as_json["usage"]["cost_usd"] > 0 and as_json["usage"]["unpriced_calls"] == 0
    assert "usage: 2 model calls" in shown.stdout
    assert as_json["name"] == "demo" and "demo" in as_json["key"]
    assert [m["role"] for m in as_json["messages"]] == ["user", "assistant", "tool", "assistant"]
    for message in as_json["messages"]:
        assert set(message) == {
            "role",
            "content",
            "tool_calls",
            "tool_call_id",
            "name",
            "interrupted",
        }
    call = as_json["messages"][1]["tool_calls"][0]
    assert call["name"] == "read_file"
    assert as_json["messages"][2]["tool_call_id"] == call["id"]

    found = cli("sessions", "search", "meeting note")
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines()[0].startswith("demo  ")
    assert "later" not in found.stdout
    assert "no matches" in cli("sessions", "search", "zebra").stdout


def test_unknown_and_reserved_session_names_are_clear_errors(cli: Cli) -> None:
    unknown = cli("sessions", "show", "nosuch")
    assert unknown.returncode == 1
    assert unknown.stdout == ""
    assert unknown.stderr == "seam: no session named 'nosuch' (see: seam sessions list)\n"

    reserved = cli("sessions", "show", "task:parent:1")
    assert reserved.returncode != 0
    assert reserved.stderr.startswith("seam: ") and "reserved" in reserved.stderr

    assert "no sessions yet" in cli("sessions", "list").stdout
