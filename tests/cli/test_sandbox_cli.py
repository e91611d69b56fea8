"""What `seam` says about isolation: the sandbox backend in the chat banner and in
`seam doctor`, and the question before starting in the home directory itself (or `/`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from seam.services.sandbox.bwrap import DEFAULT_BWRAP, bwrap_available
from tests.cli.conftest import SEAM, Cli
from tests.cli.test_doctor import lines_by_check
from tests.support.in_process import run_seam
from tests.support.openai_server import OpenAIServer, text_reply

BWRAP = Path(DEFAULT_BWRAP).exists() and bwrap_available()

pytestmark = pytest.mark.in_process


def seam_in(cli: Cli, cwd: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """`seam *args` started in `cwd`, in the test process."""
    return run_seam(args, env=cli.env, cwd=cwd, stdin=stdin)


def spawn_in(cli: Cli, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`seam *args` started in `cwd`, as a process of its own."""
    return subprocess.run(
        [str(SEAM), *args],
        cwd=cwd,
        env=cli.env,
        input="",
        capture_output=True,
        encoding="utf-8",
        timeout=30,
    )


def user_home(cli: Cli) -> Path:
    return Path(cli.env["HOME"])


@pytest.mark.parametrize("command", [["run", "hello"], ["chat"]])
def test_starting_in_the_home_without_a_terminal_or_yes_is_refused(
    cli: Cli, openai_server: OpenAIServer, command: list[str]
) -> None:
    result = seam_in(cli, user_home(cli), *command, stdin="/exit\n")
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert "your home directory" in line and "--yes" in line and "anywhere in it" in line
    assert openai_server.chat_requests == []  # nothing ran


def test_starting_in_the_root_is_refused_too(cli: Cli, openai_server: OpenAIServer) -> None:
    # A process of its own, started in / itself.
    result = spawn_in(cli, Path("/"), "run", "hello")
    assert result.returncode == 2
    assert "the working directory is / (the whole machine)" in result.stderr
    assert openai_server.chat_requests == []


def test_yes_starts_in_the_home_with_a_warning(cli: Cli, openai_server: OpenAIServer) -> None:
    openai_server.push(text_reply("Hi."))
    result = seam_in(cli, user_home(cli), "run", "--yes", "hello")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hi.\n"
    assert "warning: the working directory is your home directory" in result.stderr


def test_a_project_folder_is_not_questioned(cli: Cli, openai_server: OpenAIServer) -> None:
    openai_server.push(text_reply("Hi."))
    result = cli("run", "hello")
    assert (result.returncode, result.stdout, result.stderr) == (0, "Hi.\n", "")


@pytest.mark.skipif(not BWRAP, reason="bubblewrap is missing (scripts/ensure-bwrap)")
def test_doctor_and_banner_name_bubblewrap(cli: Cli) -> None:
    doctor = cli("doctor")
    sandbox = lines_by_check(doctor.stdout)["sandbox"]
    limits = "memory 2048 MB, 256 processes, files 1024 MB, CPU 300 s"
    assert sandbox == f"✓ bwrap ({limits}, network per personality)"
    chat = cli("chat", stdin="/exit\n")
    assert chat.returncode == 0, chat.stderr
    assert f"sandbox bwrap ({limits}, network off)" in chat.stdout


@pytest.mark.skipif(not BWRAP, reason="bubblewrap is missing (scripts/ensure-bwrap)")
def test_doctor_and_banner_show_the_configured_limits(cli: Cli) -> None:
    cli.write_config(
        "[sandbox]\nmemory_mb = 512\nmax_processes = 64\nmax_file_mb = 0\ncpu_seconds = 30\n"
    )
    doctor = cli("doctor")
    sandbox = lines_by_check(doctor.stdout)["sandbox"]
    limits = "memory 512 MB, 64 processes, files unlimited, CPU 30 s"
    assert sandbox == f"✓ bwrap ({limits}, network per personality)"
    cli.write_config("[sandbox]\nmemory_mb = -1\n")
    doctor = cli("doctor")
    assert doctor.returncode != 0 and "memory_mb" in doctor.stdout + doctor.stderr


def test_doctor_and_banner_say_when_commands_are_not_isolated(cli: Cli) -> None:
    cli.write_config('[sandbox]\nbackend = "local"\n')
    doctor = cli("doctor")
    sandbox = lines_by_check(doctor.stdout)["sandbox"]
    assert sandbox == "✓ local — no isolation; every command not proven read-only asks"
    chat = cli("chat", stdin="/exit\n")
    assert chat.returncode == 0, chat.stderr
    assert "sandbox local — no isolation; every command not proven read-only asks" in chat.stdout
