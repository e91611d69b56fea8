"""`/undo`, `/diff` and `/rewind N` in `seam chat`: on a real pseudo-terminal (as a person
types them) and through a pipe (as a script does), over real files and checkpoints; the
model is the loopback OpenAI server."""

from __future__ import annotations

import json
import os
import pty
import re
from pathlib import Path

from tests.checkpoints.surface_support import two_turns_script, write_call
from tests.cli.conftest import SEAM, Cli
from tests.cli.test_terminal import PROMPT_SHOWN, Terminal
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply


def leave(terminal: Terminal, pid: int, *, after: int) -> int:
    """Wait for the prompt, press Ctrl-D, and return the chat's exit code."""
    terminal.wait_for(PROMPT_SHOWN, after=after)
    terminal.type("\x04")
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def spawn_chat(cli: Cli) -> tuple[int, Terminal]:
    """`seam chat --session s` in the project on a fresh pty: its pid and the terminal."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: become `seam chat` on the pty, never return into pytest
        try:
            os.chdir(cli.project)
            env = {**cli.env, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
            os.execve(str(SEAM), [str(SEAM), "chat", "--session", "s"], env)
        finally:
            os._exit(127)
    return pid, Terminal(fd)


def first_prompt(terminal: Terminal) -> int:
    return terminal.wait_for(PROMPT_SHOWN, after=terminal.wait_for("Ctrl-D to leave"))


def ask_fresh_then_leave(terminal: Terminal, pid: int, *, after: int) -> int:
    """The turn after the undo ("what now?", answered "Fresh answer."), then Ctrl-D."""
    terminal.type("what now?\r")
    return leave(terminal, pid, after=terminal.wait_for("Fresh answer.", after=after))


def test_undo_on_a_terminal_restores_the_file_and_the_model_forgets(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    notes = cli.project / "notes.txt"
    notes.write_text("first version\n")
    openai_server.push(
        tool_call_reply(
            [write_call("notes.txt", "UNDONE-CONTENT\n"), write_call("new.txt", "x\n")]
        ),
        text_reply("I rewrote the notes."),
        text_reply("Fresh answer."),
    )
    pid, terminal = spawn_chat(cli)
    try:
        at = first_prompt(terminal)
        terminal.type("rewrite the notes\r")
        at = terminal.wait_for("I rewrote the notes.", after=at)
        at = terminal.wait_for(PROMPT_SHOWN, after=at)
        assert notes.read_text() == "UNDONE-CONTENT\n"
        terminal.type("/undo\r")
        at = terminal.wait_for("undid turn 1 of session s", after=at)
        at = terminal.wait_for("removed", after=at)
        at = terminal.wait_for(PROMPT_SHOWN, after=at)
        assert notes.read_text() == "first version\n"
        assert not (cli.project / "new.txt").exists()
        code = ask_fresh_then_leave(terminal, pid, after=at)
    finally:
        os.close(terminal.fd)
    assert code == 0
    screen = terminal.seen.decode()
    assert re.search(r"restored +notes\.txt", screen), screen
    assert re.search(r"deleted +new\.txt", screen), screen
    last = openai_server.chat_requests[-1].body
    sent = json.dumps(last["messages"])
    assert "UNDONE-CONTENT" not in sent and "rewrite the notes" not in sent
    assert [m["content"] for m in last["messages"] if m["role"] == "user"] == ["what now?"]


def test_diff_and_rewind_through_a_pipe(cli: Cli, openai_server: OpenAIServer) -> None:
    two_turns_script(openai_server, cli.project)
    script = "/diff\none\ntwo\n/help\n/diff\n/diff 1\n/diff x\n/rewind 9\n/rewind 1\n/diff\n"
    result = cli("chat", "--session", "p", stdin=script)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "error: nothing yet in this session" in out
    for command in ("/undo", "/diff [N]", "/rewind N"):
        assert command in out
    assert "+turn 2 was here" in out and "+from turn 1" in out
    assert "error: usage: /diff [N] (a turn number)" in out
    assert "error: turn 9 is out of range: give 0 to 1" in out
    assert "rewound to turn 1 (of 2)" in out and "restored  notes.txt" in out
    assert (cli.project / "notes.txt").read_text() == "first version\n"
    assert (cli.project / "a.txt").read_text() == "from turn 1\n"
    assert len(openai_server.chat_requests) == 4


OLD = bytes(range(256)) * 4
BEFORE = {"notes.txt": b"first version\r\n", "old.bin": OLD}


def tidy_script(server: OpenAIServer) -> None:
    """One turn that creates new.txt, edits notes.txt and `rm`s old.bin; then a fresh one."""
    server.push(
        tool_call_reply(
            [
                write_call("new.txt", "created\n"),
                write_call("notes.txt", "UNDONE-EDIT\n"),
                ("terminal", json.dumps({"command": "rm old.bin"})),
            ]
        ),
        text_reply("Tidied."),
        text_reply("Fresh answer."),
    )


def files(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in root.iterdir()}


def test_undo_on_a_terminal_puts_back_a_create_an_edit_and_an_rm(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    """The issue's scenario on a pty: `rm` approved with the chat's own [a]lways answer."""
    cli.write_config('[sandbox]\nbackend = "local"\n')
    for name, data in BEFORE.items():
        (cli.project / name).write_bytes(data)
    tidy_script(openai_server)
    pid, terminal = spawn_chat(cli)
    try:
        at = first_prompt(terminal)
        terminal.type("tidy up\r")
        at = terminal.wait_for("[a]lways", after=at)
        terminal.type("a\r")
        at = terminal.wait_for("Tidied.", after=at)
        at = terminal.wait_for(PROMPT_SHOWN, after=at)
        assert not (cli.project / "old.bin").exists()
        terminal.type("/undo\r")
        at = terminal.wait_for("undid turn 1 of session s", after=at)
        at = terminal.wait_for(PROMPT_SHOWN, after=at)
        assert files(cli.project) == BEFORE
        code = ask_fresh_then_leave(terminal, pid, after=at)
    finally:
        os.close(terminal.fd)
    assert code == 0
    screen = terminal.seen.decode(errors="replace")
    for pattern in (r"deleted +new\.txt", r"restored +notes\.txt", r"recreated +old\.bin"):
        assert re.search(pattern, screen), screen
    shown = cli("sessions", "show", "s", "--json")
    assert shown.returncode == 0, shown.stderr
    kept = json.dumps(json.loads(shown.stdout)["messages"])
    assert "tidy up" not in kept and "UNDONE-EDIT" not in kept and "what now?" in kept
    sent = json.dumps(openai_server.chat_requests[-1].body["messages"])
    assert "tidy up" not in sent and "UNDONE-EDIT" not in sent and "rm old.bin" not in sent
    assert [
        m["content"]
        for m in openai_server.chat_requests[-1].body["messages"]
        if m["role"] == "user"
    ] == ["what now?"]
