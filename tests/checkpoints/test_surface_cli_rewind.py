"""`seam sessions rewind` and `seam sessions fork` over what real `seam run`s stored (and
checkpointed): the files and the transcript go back, a fork copies, and bad input gets one
line, the right exit code and changes nothing."""

from __future__ import annotations

import json

import pytest

from tests.checkpoints.surface_support import two_turns_script
from tests.cli.conftest import Cli
from tests.support.openai_server import OpenAIServer

pytestmark = pytest.mark.in_process


def two_turns(cli: Cli, server: OpenAIServer) -> None:
    two_turns_script(server, cli.project)
    for text in ("one", "two"):
        done = cli("run", "--session", "s", text)
        assert done.returncode == 0, done.stderr


def users(cli: Cli, name: str) -> list[str]:
    shown = json.loads(cli("sessions", "show", name, "--json").stdout)
    return [m["content"] for m in shown["messages"] if m["role"] == "user"]


def test_rewind_restores_files_and_drops_turns(cli: Cli, openai_server: OpenAIServer) -> None:
    two_turns(cli, openai_server)
    done = cli("sessions", "rewind", "s", "--to", "1")
    assert done.returncode == 0, done.stderr
    assert "rewound session s to turn 1 (of 2)" in done.stdout
    assert "restored  notes.txt" in done.stdout
    assert (cli.project / "notes.txt").read_text() == "first version\n"
    assert (cli.project / "a.txt").read_text() == "from turn 1\n"
    assert users(cli, "s") == ["one"]


def test_fork_copies_turns_and_leaves_files(cli: Cli, openai_server: OpenAIServer) -> None:
    two_turns(cli, openai_server)
    done = cli("sessions", "fork", "s", "--at", "1")
    assert done.returncode == 0, done.stderr
    assert "forked session s-fork from s at turn 1" in done.stdout
    assert users(cli, "s-fork") == ["one"] and users(cli, "s") == ["one", "two"]
    assert (cli.project / "notes.txt").read_text() == "turn 2 was here\n"
    again = cli("sessions", "fork", "s", "--at", "2", "--as", "b", "--restore")
    assert again.returncode == 0, again.stderr
    assert users(cli, "b") == ["one", "two"]
    assert "no file to restore" in again.stdout
    taken = cli("sessions", "fork", "s", "--at", "1", "--as", "b")
    assert taken.returncode == 1 and "already exists" in taken.stderr
    assert users(cli, "b") == ["one", "two"]


def test_bad_input_is_one_line_and_changes_nothing(cli: Cli, openai_server: OpenAIServer) -> None:
    two_turns(cli, openai_server)
    for args, code, words in (
        (("rewind", "nobody", "--to", "1"), 1, "no session named 'nobody'"),
        (("rewind", "s", "--to", "2"), 2, "out of range: give 0 to 1"),
        (("rewind", "s", "--to", "-3"), 2, "out of range"),
        (("fork", "s", "--at", "0"), 2, "out of range: give 1 to 2"),
        (("fork", "s", "--at", "1", "--as", "task:x"), 2, ""),
    ):
        failed = cli("sessions", *args)
        assert failed.returncode == code, (args, failed.stdout, failed.stderr)
        assert words in failed.stderr and len(failed.stderr.strip().splitlines()) == 1
        assert "Traceback" not in failed.stderr
    assert users(cli, "s") == ["one", "two"]
    assert (cli.project / "notes.txt").read_text() == "turn 2 was here\n"


def test_a_user_edit_is_not_overwritten_without_yes(cli: Cli, openai_server: OpenAIServer) -> None:
    two_turns(cli, openai_server)
    (cli.project / "notes.txt").write_text("mine\n")
    refused = cli("sessions", "rewind", "s", "--to", "1")
    assert refused.returncode == 1 and "--yes" in refused.stderr
    assert (cli.project / "notes.txt").read_text() == "mine\n" and users(cli, "s") == ["one", "two"]
    done = cli("sessions", "rewind", "s", "--to", "1", "--yes")
    assert done.returncode == 0, done.stderr
    assert (cli.project / "notes.txt").read_text() == "first version\n"
