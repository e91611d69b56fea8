"""Every command that reads the config says what is wrong with it in one line and exits
2, never with a traceback: the one-shot and chat always did, and the commands that read
the settings themselves (keys, models, skills, mcp, memory, guard, heartbeat) now do too."""

from __future__ import annotations

import pytest

from tests.cli.conftest import Cli

BAD = "[model]\nnme = 'gpt-4o'\n"
COMMANDS = [
    ("keys", "list"),
    ("keys", "create", "me"),
    ("models",),
    ("skills", "list"),
    ("mcp", "list"),
    ("memory", "show"),
    ("heartbeat", "status"),
    ("run", "hi"),
]


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_a_bad_config_is_one_line_and_exit_2(cli: Cli, args: tuple[str, ...]) -> None:
    config = cli.write_config(BAD)
    result = cli(*args)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines == [f"seam: {config}: model.nme: Extra inputs are not permitted"]
