"""What a person at a terminal sees: both tests run `seam` on a real pseudo-terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time

from tests.cli.conftest import SEAM, Cli
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply

DEADLINE = 20.0
PROMPT_SHOWN = "\x1b[?2004h"


class Terminal:
    """The master side of a pty: reads what the program wrote, types for the user."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.seen = b""

    def wait_for(self, text: str, *, after: int = 0) -> int:
        """Read until `text` appears past offset `after`; returns the offset after it."""
        needle = text.encode()
        end = time.monotonic() + DEADLINE
        while (found := self.seen.find(needle, after)) < 0:
            remaining = end - time.monotonic()
            assert remaining > 0, f"{text!r} never appeared; the screen so far: {self.seen!r}"
            if select.select([self.fd], [], [], remaining)[0]:
                try:
                    chunk = os.read(self.fd, 65536)
                except OSError:  # the program exited and the pty closed
                    chunk = b""
                assert chunk, f"{text!r} never appeared before exit: {self.seen!r}"
                self.seen += chunk
        return found + len(needle)

    def type(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def leave_chat(self, pid: int, *, after: int) -> int:
        """At the chat's next prompt, Ctrl-D; the chat's exit code once it has left."""
        self.wait_for(PROMPT_SHOWN, after=after)
        self.type("\x04")
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status)


def test_run_shows_tool_activity_on_a_terminal_stderr_only(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    (cli.project / "note.txt").write_text("hi")
    openai_server.push(tool_call_reply([("read_file", '{"path": "note.txt"}')]), text_reply("ok"))
    master, slave = pty.openpty()
    try:
        result = subprocess.run(
            [str(SEAM), "run", "read it"],
            cwd=cli.project,
            env=cli.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=slave,
            encoding="utf-8",
            timeout=30,
        )
        os.close(slave)
        slave = -1
        terminal = Terminal(master)
        started = terminal.wait_for('⚙ read_file {"path": "note.txt"}')
        terminal.wait_for("✓ read_file", after=started)
    finally:
        os.close(master)
        if slave >= 0:
            os.close(slave)
    assert result.returncode == 0
    assert result.stdout == "ok\n"


def test_chat_on_a_terminal_edits_lines_cancels_turns_and_keeps_history(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    openai_server.push(
        text_reply("Hello from the model!"),
        # Streams a little, then stalls until the test ends.
        text_reply("A long story that never ends", chunk_size=7).stalled(after=2),
    )
    pid, fd = pty.fork()
    if pid == 0:  # the child: become `seam chat` on the pty, never return into pytest
        try:
            os.chdir(cli.project)
            # This terminal does not answer cursor-position requests: say so up front.
            env = {**cli.env, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
            os.execve(str(SEAM), [str(SEAM), "chat"], env)
        finally:
            os._exit(127)
    terminal = Terminal(fd)
    try:
        # prompt_toolkit switches bracketed paste on each time it shows a prompt.
        at = terminal.wait_for(PROMPT_SHOWN, after=terminal.wait_for("Ctrl-D to leave"))
        terminal.type("half-typed words\x03")  # Ctrl-C at the prompt drops the line
        terminal.type("hello\r")
        at = terminal.wait_for("Hello from the model!", after=at)
        at = terminal.wait_for(PROMPT_SHOWN, after=at)
        terminal.type("tell me a story\r")
        at = terminal.wait_for("A long", after=at)
        terminal.type("\x03")  # Ctrl-C during a turn cancels the turn, not the chat
        at = terminal.wait_for("(cancelled)", after=at)
        terminal.wait_for(PROMPT_SHOWN, after=at)
        terminal.type("\x04")  # Ctrl-D at an empty prompt leaves
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    first, _ = openai_server.chat_requests
    assert [m["content"] for m in first.body["messages"] if m["role"] == "user"] == ["hello"]
    history = (cli.home / "history").read_text()
    assert "+hello" in history and "+tell me a story" in history
    assert "half-typed" not in history
