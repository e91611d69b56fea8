"""kill -9 between the checkpoint and the end of the tool, then `seam resume` and
`seam undo`: the files come back exactly.

The model's command changes the files and then waits on a flag file outside the project,
so the test knows the tool is running (the files changed) when it kills `seam run`; the
checkpoint row must already be in the store then (intent first). The flag is raised
after the kill, so the orphaned command ends.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.checkpoints.test_undo_cli import BEFORE, files, setup_project
from tests.cli.conftest import Cli
from tests.cli.test_crash_recovery import wait_for
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply

pytestmark = pytest.mark.in_process

SESSION = "crashy"


def normalized(cli: Cli, command: str) -> str:
    """The command as the guard keys approvals (`seam guard check`'s `command:` line)."""
    checked = cli("guard", "check", command)
    [line] = [x for x in checked.stdout.splitlines() if x.startswith("command: ")]
    return line.removeprefix("command: ")


def test_kill_while_the_tool_runs_then_resume_and_undo(
    cli: Cli, openai_server: OpenAIServer, tmp_path: Path
) -> None:
    flag = tmp_path / "release"
    command = (
        f"printf 'changed\\n' > edit.txt && rm gone.bin && "
        f"while [ ! -e {flag} ]; do sleep 0.05; done"
    )
    setup_project(cli, "local", always=(normalized(cli, command),))
    openai_server.push(tool_call_reply([("terminal", json.dumps({"command": command}))]))
    process = cli.popen("run", "--session", SESSION, "change things slowly")
    try:
        kill_once_changed(cli, process)
    finally:
        flag.write_text("go")  # the orphaned command ends
    with sqlite3.connect(cli.home / "sessions.db") as db:
        rows = db.execute("SELECT seq, after FROM turn_checkpoints").fetchall()
    assert rows == [(1, None)]  # recorded before the tool ran; the turn never ended

    openai_server.push(text_reply("I was interrupted."))
    resumed = cli("resume", "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert (cli.project / "edit.txt").read_bytes() == b"changed\n"

    undone = cli("undo", "--session", SESSION)
    assert undone.returncode == 0, undone.stderr
    assert files(cli.project) == BEFORE
    shown = json.loads(cli("sessions", "show", SESSION, "--json").stdout)
    assert shown["messages"] == []


def kill_once_changed(cli: Cli, process: subprocess.Popen[str]) -> None:
    """SIGKILL `seam run` once its command has deleted gone.bin (it is still running)."""
    gone = cli.project / "gone.bin"
    try:
        wait_for(lambda: not gone.exists() or process.poll() is not None, "the change")
        assert process.poll() is None, process.communicate()
        process.send_signal(signal.SIGKILL)
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=10)
