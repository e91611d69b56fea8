"""The in-process `seam` (tests/support/in_process.py) answers as the console script does,
and leaves the test process as it found it: the CLI tests that use it check the same
exit codes and the same text a person would get."""

from __future__ import annotations

import logging
import os
import signal
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import Cli, make_cli
from tests.support.in_process import run_seam
from tests.support.openai_server import closed_port

# Commands whose whole answer (exit code, stdout, stderr) needs no model and no clock.
SAME_ANSWER: list[tuple[tuple[str, ...], str | None]] = [
    (("--version",), None),
    ((), None),
    (("no-such-command",), None),
    (("run", "--help"), None),
    (("run", "  "), None),
    (("run", "-"), ""),
    (("run", "--personality", "pirate", "hi"), None),
    (("sessions", "list"), None),
    (("sessions", "show", "nosuch"), None),
    (("sessions", "prune", "--older-than", "soon"), None),
    (("dnd", "maybe"), None),
    (("guard", "check", "-"), "rm -rf ~\n"),
    (("logs", "--level", "loud"), None),
    (("cron", "add", "--every", "5s", "x"), None),
]


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Cli, Cli]:
    """The same setting twice: one run in process, one as the console script. The
    provider is a port nothing listens on: none of the commands may reach it."""
    env = {"OPENAI_BASE_URL": f"http://127.0.0.1:{closed_port()}/v1", "OPENAI_API_KEY": "k"}
    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    return (
        make_cli(tmp_path / "in", env, in_process=True),
        make_cli(tmp_path / "out", env),
    )


@pytest.mark.parametrize(
    ("args", "stdin"), SAME_ANSWER, ids=[" ".join(args) or "(none)" for args, _ in SAME_ANSWER]
)
def test_the_answer_is_the_console_scripts(
    pair: tuple[Cli, Cli], args: tuple[str, ...], stdin: str | None
) -> None:
    inside, outside = pair
    got = inside(*args, stdin=stdin)
    want = outside(*args, stdin=stdin)
    # Paths differ only by the folder each setting lives in.
    assert (got.returncode, got.stdout, got.stderr.replace("/in/", "/out/")) == (
        want.returncode,
        want.stdout,
        want.stderr,
    )


def test_a_config_error_names_the_file_as_the_console_script_does(
    pair: tuple[Cli, Cli],
) -> None:
    inside, outside = pair
    for cli in pair:
        cli.write_config("[model\n")
    got, want = inside("sessions", "list"), outside("sessions", "list")
    assert got.returncode == want.returncode == 2
    assert got.stderr == want.stderr.replace(str(outside.home), str(inside.home))


def test_stdin_that_is_not_utf8_is_read_as_a_process_reads_it(tmp_path: Path) -> None:
    cli = make_cli(tmp_path, {}, in_process=True)
    result = run_seam(["run", "-"], env=cli.env, cwd=cli.project, stdin=b"caf\xe9\n")
    assert result.returncode == 2
    assert result.stderr == (
        "seam: stdin is not valid UTF-8 (byte 0xe9 at offset 3); pipe UTF-8 text to seam run -\n"
    )


def test_nothing_of_a_call_stays_in_the_test_process(tmp_path: Path) -> None:
    cli = make_cli(tmp_path, {"SEAM_TEST_MARK": "inside"}, in_process=True)
    cli.write_config("[model\n")
    root = logging.getLogger()
    before = (
        dict(os.environ),
        os.getcwd(),
        (sys.stdin, sys.stdout, sys.stderr),
        list(root.handlers),
        root.level,
        signal.getsignal(signal.SIGINT),
    )
    assert cli("sessions", "list").returncode == 2  # a failure on the way
    assert cli("dnd", "on").returncode == 2
    after = (
        dict(os.environ),
        os.getcwd(),
        (sys.stdin, sys.stdout, sys.stderr),
        list(root.handlers),
        root.level,
        signal.getsignal(signal.SIGINT),
    )
    assert after == before
    assert "SEAM_TEST_MARK" not in os.environ


def test_each_call_sees_only_its_own_environment(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = make_cli(tmp_path / "a", {"EDITOR": "ed-a"}, in_process=True)
    second = make_cli(tmp_path / "b", {}, in_process=True)
    second.env.pop("EDITOR", None)
    assert first("memory", "add", "from a").returncode == 0
    shown = second("memory", "show")
    assert shown.returncode == 0, shown.stderr
    assert "from a" not in shown.stdout  # its own SEAM_HOME, not the first call's
    assert str(second.home) in shown.stdout
