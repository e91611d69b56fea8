"""`seam undo` and `seam changes` end to end, on both sandbox backends, with the loopback
model scripting the turns: a turn creates a file, edits another and deletes a third with
`rm` (approved in advance: an "always" answer in approvals.json); `seam undo` puts all
three back byte for byte, drops the turn from the transcript, and the next turn's model
request no longer holds it. A `sed -i` shows in `seam changes`; a person's later edit is
never overwritten silently.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from seam.services.sandbox.bwrap import DEFAULT_BWRAP, bwrap_available
from tests.cli.conftest import Cli, sent_messages
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply

pytestmark = pytest.mark.in_process

BWRAP = Path(DEFAULT_BWRAP).exists() and bwrap_available()
BACKENDS = [
    "local",
    pytest.param(
        "bwrap",
        marks=pytest.mark.skipif(not BWRAP, reason="bubblewrap cannot run (scripts/ensure-bwrap)"),
    ),
]
SESSION = "undo-me"
CHANGE_PROMPT = "tidy the project please"
BEFORE = {
    "edit.txt": b"one\ntwo\r\nthree\n",
    "gone.bin": bytes(range(256)) * 4,
    "keep/deep.txt": b"untouched\n",
}
SED = "sed -i 's/one/uno/' edit.txt"


def setup_project(cli: Cli, backend: str, always: tuple[str, ...] = ("rm gone.bin",)) -> None:
    for rel, data in BEFORE.items():
        path = cli.project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    cli.home.mkdir(parents=True, exist_ok=True)
    cli.write_config(f'[sandbox]\nbackend = "{backend}"\n')
    approvals = {"version": 1, "always": list(always), "always_deny": []}
    (cli.home / "approvals.json").write_text(json.dumps(approvals))


def script_changing_turn(server: OpenAIServer) -> None:
    server.push(
        tool_call_reply(
            [
                ("write_file", json.dumps({"path": "new/made.txt", "content": "fresh\n"})),
                ("write_file", json.dumps({"path": "edit.txt", "content": "rewritten\n"})),
                ("terminal", json.dumps({"command": "rm gone.bin"})),
            ]
        ),
        text_reply("Tidied."),
    )


def files(project: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(project)): p.read_bytes()
        for p in sorted(project.rglob("*"))
        if p.is_file()
    }


def transcript(cli: Cli) -> list[dict[str, Any]]:
    shown = cli("sessions", "show", SESSION, "--json")
    assert shown.returncode == 0, shown.stderr
    messages: list[dict[str, Any]] = json.loads(shown.stdout)["messages"]
    return messages


@pytest.mark.parametrize("backend", BACKENDS)
def test_undo_restores_files_and_drops_the_turn(
    backend: str, cli: Cli, openai_server: OpenAIServer
) -> None:
    setup_project(cli, backend)
    openai_server.push(text_reply("Hello."))
    first = cli("run", "--session", SESSION, "say hello")
    assert first.returncode == 0, first.stderr
    script_changing_turn(openai_server)
    changed = cli("run", "--session", SESSION, CHANGE_PROMPT)
    assert changed.returncode == 0, changed.stderr
    after = files(cli.project)
    assert "gone.bin" not in after and after["edit.txt"] == b"rewritten\n"
    assert after["new/made.txt"] == b"fresh\n"

    undone = cli("undo", "--session", SESSION)
    assert undone.returncode == 0, undone.stderr
    assert files(cli.project) == BEFORE  # byte for byte, the new file gone
    assert not (cli.project / "new").exists()
    for line in ("deleted   new/made.txt", "restored  edit.txt", "recreated gone.bin"):
        assert line in undone.stdout
    assert "undid turn 2" in undone.stdout

    messages = transcript(cli)
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert CHANGE_PROMPT not in json.dumps(messages)

    openai_server.push(text_reply("Back again."))
    again = cli("run", "--session", SESSION, "what did we do?")
    assert again.returncode == 0, again.stderr
    sent = json.dumps(sent_messages(openai_server, len(openai_server.chat_requests) - 1))
    assert "say hello" in sent and CHANGE_PROMPT not in sent and "write_file" not in sent

    nothing = cli("undo", "--session", SESSION)
    assert nothing.returncode == 1
    assert "nothing to undo" in nothing.stdout


@pytest.mark.parametrize("backend", BACKENDS)
def test_changes_shows_a_shell_edit(backend: str, cli: Cli, openai_server: OpenAIServer) -> None:
    setup_project(cli, backend, always=("sed -i s/one/uno/ edit.txt",))
    openai_server.push(
        tool_call_reply([("terminal", json.dumps({"command": SED}))]), text_reply("Done.")
    )
    ran = cli("run", "--session", SESSION, "translate the first word")
    assert ran.returncode == 0, ran.stderr
    assert (cli.project / "edit.txt").read_bytes().startswith(b"uno\n")

    shown = cli("changes", "--session", SESSION)
    assert shown.returncode == 0, shown.stderr
    assert "--- a/edit.txt" in shown.stdout and "+++ b/edit.txt" in shown.stdout
    assert "-one" in shown.stdout and "+uno" in shown.stdout
    assert cli("changes", "--session", SESSION, "--turn", "1").stdout == shown.stdout

    missing = cli("changes", "--session", SESSION, "--turn", "7")
    assert missing.returncode == 1 and "changed no files" in missing.stdout


def test_a_turn_that_only_reads_takes_no_checkpoint(cli: Cli, openai_server: OpenAIServer) -> None:
    setup_project(cli, "local")
    openai_server.push(
        tool_call_reply(
            [
                ("read_file", json.dumps({"path": "edit.txt"})),
                ("terminal", json.dumps({"command": "ls -la && cat edit.txt"})),
            ]
        ),
        text_reply("Read it."),
    )
    ran = cli("run", "--session", SESSION, "look around")
    assert ran.returncode == 0, ran.stderr
    assert not (cli.home / "checkpoints").exists()  # no git call, nothing written
    nothing = cli("undo", "--session", SESSION)
    assert nothing.returncode == 1 and "nothing to undo" in nothing.stdout


def test_a_later_edit_by_the_person_is_never_overwritten_silently(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    setup_project(cli, "local")
    script_changing_turn(openai_server)
    assert cli("run", "--session", SESSION, CHANGE_PROMPT).returncode == 0
    (cli.project / "edit.txt").write_bytes(b"my own words\n")  # the person, after the turn

    refused = cli("undo", "--session", SESSION)
    assert refused.returncode == 1
    assert "edit.txt" in refused.stderr and "--yes" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert (cli.project / "edit.txt").read_bytes() == b"my own words\n"
    assert not (cli.project / "gone.bin").exists()  # nothing was restored

    forced = cli("undo", "--session", SESSION, "--yes")
    assert forced.returncode == 0, forced.stderr
    assert files(cli.project) == BEFORE
    kept = forced.stdout.split("checkpoint ")[-1].strip()
    assert len(kept) == 12
    # The person's version is kept: it is in the checkpoint undo took first.
    [repo] = [p for p in (cli.home / "checkpoints").iterdir() if p.is_dir()]
    import subprocess

    shown = subprocess.run(
        ["git", f"--git-dir={repo}", "show", f"{kept}:edit.txt"],
        capture_output=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1"},
    )
    assert shown.stdout == b"my own words\n"


def test_undo_without_a_session_takes_the_latest(cli: Cli, openai_server: OpenAIServer) -> None:
    setup_project(cli, "local")
    script_changing_turn(openai_server)
    assert cli("run", CHANGE_PROMPT).returncode == 0  # a fresh session of its own
    undone = cli("undo", "--yes")
    assert undone.returncode == 0, undone.stderr
    assert files(cli.project) == BEFORE


def test_bad_input_is_one_line(cli: Cli, openai_server: OpenAIServer) -> None:
    setup_project(cli, "local")
    for args in (("undo", "--session", "nobody"), ("changes", "--session", "task:x:y")):
        result = cli(*args)
        assert result.returncode != 0
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "Traceback" not in result.stderr


def test_on_a_terminal_undo_asks_before_overwriting(cli: Cli, openai_server: OpenAIServer) -> None:
    import os
    import pty
    import subprocess

    from tests.cli.conftest import SEAM
    from tests.cli.test_terminal import Terminal

    setup_project(cli, "local")
    script_changing_turn(openai_server)
    assert cli("run", "--session", SESSION, CHANGE_PROMPT).returncode == 0
    (cli.project / "edit.txt").write_bytes(b"mine\n")
    for answer, code, edit in (("n", 1, b"mine\n"), ("y", 0, BEFORE["edit.txt"])):
        master, slave = pty.openpty()
        process = subprocess.Popen(
            [str(SEAM), "undo", "--session", SESSION],
            cwd=cli.project,
            env=cli.env,
            stdin=slave,
            stdout=slave,
            stderr=subprocess.PIPE,
        )
        os.close(slave)
        try:
            terminal = Terminal(master)
            terminal.wait_for("you changed edit.txt after turn 1")
            terminal.wait_for("[y/N] ")
            terminal.type(answer + "\n")
            assert process.wait(timeout=30) == code
        finally:
            os.close(master)
            if process.poll() is None:
                process.kill()
            process.communicate()
        assert (cli.project / "edit.txt").read_bytes() == edit
    assert files(cli.project) == BEFORE
