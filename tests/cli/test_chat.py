"""`seam chat` scripted through a pipe: slash commands, streamed answers, sessions."""

from __future__ import annotations

import re

import pytest

from tests.cli.conftest import Cli, sent_messages
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply

pytestmark = pytest.mark.in_process


def test_help_answer_tools_and_exit(cli: Cli, openai_server: OpenAIServer) -> None:
    openai_server.push(text_reply("Hello from the model!"))

    result = cli("chat", stdin="/help\nhello\n/tools\n/exit\n")

    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "provider openai · model gpt-4o-mini" in out
    for command in ("/new", "/sessions", "/resume", "/personality", "/tools", "/exit"):
        assert command in out
    assert "Hello from the model!" in out
    assert "read_file" in out and "Read a text file." in out
    assert len(openai_server.chat_requests) == 1


def test_commands_never_reach_the_model(cli: Cli, openai_server: OpenAIServer) -> None:
    result = cli(
        "chat",
        stdin="/resume nosuch\n/frobnicate\n/personality\n/personality pirate\n/sessions\n",
    )

    assert result.returncode == 0, result.stderr  # end of input leaves like /exit
    out = result.stdout
    assert "error: no session named 'nosuch'" in out
    assert "unknown command /frobnicate; type /help" in out
    assert "current personality: default" in out
    assert "unknown personality 'pirate'" in out
    assert "no sessions yet" in out
    assert openai_server.chat_requests == []


def test_tool_activity_streams_and_resume_continues_a_session(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    (cli.project / "note.txt").write_text("Buy milk.")
    openai_server.push(
        tool_call_reply([("read_file", '{"path": "note.txt"}'), ("read_file", '{"path": "x"}')]),
        text_reply("You need to buy milk."),
        text_reply("Fresh start."),
        text_reply("Still about milk."),
    )

    result = cli(
        "chat",
        "--session",
        "groceries",
        stdin="what is in note.txt?\n/new\nhi\n/resume groceries\nand then?\n",
    )

    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "session groceries (new)" in out
    assert '⚙ read_file {"path": "note.txt"}' in out
    assert "✓ read_file " in out and " ms" in out
    assert "✗ read_file: error: " in out
    assert "You need to buy milk." in out
    assert "resumed session groceries (5 messages)" in out
    # The new session started empty; the resumed one sent its whole history.
    assert [m["content"] for m in sent_messages(openai_server, 2) if m["role"] == "user"] == ["hi"]
    resumed = [m["content"] for m in sent_messages(openai_server, 3) if m["role"] == "user"]
    assert resumed == ["what is in note.txt?", "and then?"]


def test_compress_summarises_the_middle_and_usage_shows_the_context(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    turns = 13  # 26 messages: more than the protected first 3 and last 20
    openai_server.push(*(text_reply(f"answer {n}") for n in range(turns)))
    openai_server.push(text_reply("## Goals\n- chat\n## Decisions\n## Facts\n- 13 questions"))
    openai_server.push(text_reply("still here"))
    questions = "".join(f"question {n} {'and more ' * 30}\n" for n in range(turns))

    result = cli("chat", stdin=f"/compress\n{questions}/usage\n/compress\nlast one\n")

    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "nothing to compress yet" in out
    assert re.search(r"context: ~[\d,]+ of 128,000 tokens \(\d%\)", out)
    compressed = re.search(
        r"compressed \(summarised\): 26 → 24 messages, ~([\d,]+) → ~([\d,]+)", out
    )
    assert compressed is not None
    before, after = (int(n.replace(",", "")) for n in compressed.groups())
    assert after < before
    summary_request = sent_messages(openai_server, turns)
    assert "## Open tasks" in summary_request[0]["content"]  # the summariser's prompt
    assert "[user] question 2" in summary_request[1]["content"]
    after = sent_messages(openai_server, turns + 1)
    assert [m["content"][:10] for m in after[1:4]] == ["question 0", "answer 0", "question 1"]
    assert "- 13 questions" in after[4]["content"]
    assert after[-1]["content"] == "last one"


def test_personality_switches_the_next_turns_of_the_same_session(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    pirate = cli.home / "personalities" / "pirate"
    pirate.mkdir(parents=True)
    (pirate / "SOUL.md").write_text("You are a pirate.", encoding="utf-8")
    openai_server.push(text_reply("Hello."), text_reply("Arr."))

    result = cli("chat", "--session", "sea", stdin="hello\n/personality pirate\nhello again\n")

    assert result.returncode == 0, result.stderr
    assert "personality is now pirate" in result.stdout
    first, second = (sent_messages(openai_server, n)[0]["content"] for n in (0, 1))
    assert "pirate" not in first
    assert second.startswith("You are a pirate.")
