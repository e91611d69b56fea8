"""Checkpoints are looked after: `seam sessions prune` drops a pruned session's
checkpoints, `seam doctor` shows their disk use, `[checkpoints] enabled = false` takes
none, and a bad `[checkpoints]` value is a one-line error."""

from __future__ import annotations

import sqlite3
import subprocess

import pytest

from tests.checkpoints.test_undo_cli import SESSION, script_changing_turn, setup_project
from tests.cli.conftest import Cli
from tests.support.openai_server import OpenAIServer

pytestmark = pytest.mark.in_process


def shadow_refs(cli: Cli) -> list[str]:
    refs: list[str] = []
    for repo in (cli.home / "checkpoints").iterdir():
        out = subprocess.run(
            ["git", f"--git-dir={repo}", "for-each-ref", "--format=%(refname)", "refs/seam/"],
            capture_output=True,
            check=True,
            env={"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1"},
        )
        refs += out.stdout.decode().split()
    return refs


def test_prune_drops_the_sessions_checkpoints(cli: Cli, openai_server: OpenAIServer) -> None:
    setup_project(cli, "local")
    script_changing_turn(openai_server)
    assert cli("run", "--session", SESSION, "change").returncode == 0
    assert len(shadow_refs(cli)) == 2  # before and after the turn
    doctor = cli("doctor")
    [line] = [x for x in doctor.stdout.splitlines() if "checkpoints:" in x]
    assert line.startswith("✓") and "MB of 2048 MB" in line

    with sqlite3.connect(cli.home / "sessions.db") as db:
        db.execute("UPDATE sessions SET ended = 1, ended_at = 0, updated_at = 0")
    pruned = cli("sessions", "prune", "--older-than", "1h")
    assert pruned.returncode == 0, pruned.stderr
    assert "pruned 1 ended session" in pruned.stdout
    assert shadow_refs(cli) == []


def test_checkpoints_off_takes_none(cli: Cli, openai_server: OpenAIServer) -> None:
    setup_project(cli, "local")
    cli.write_config('[sandbox]\nbackend = "local"\n[checkpoints]\nenabled = false\n')
    script_changing_turn(openai_server)
    assert cli("run", "--session", SESSION, "change").returncode == 0
    assert not (cli.home / "checkpoints").exists()
    off = cli("undo", "--session", SESSION)
    assert off.returncode == 1 and "checkpoints are off" in off.stderr


def test_a_bad_setting_is_one_line(cli: Cli, openai_server: OpenAIServer) -> None:
    cli.write_config("[checkpoints]\nmax_file_mb = -1\n")
    result = cli("undo")
    assert result.returncode == 2
    assert "checkpoints.max_file_mb" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
