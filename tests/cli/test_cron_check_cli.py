"""`seam cron add --check`: the check is stored and listed; an empty one or one the guard
forbids is one line and exit 2, and nothing is added."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import Cli

pytestmark = pytest.mark.in_process


def test_a_check_is_added_and_listed(cli: Cli) -> None:
    result = cli(
        "cron", "add", "--every", "1h", "--deliver", "none", "--check", "ls inbox", "Summarise"
    )
    assert result.returncode == 0, result.stderr
    [job] = json.loads(cli("cron", "list", "--json").stdout)
    assert job["check"] == "ls inbox"
    assert "check 'ls inbox'" in cli("cron", "list").stdout


@pytest.mark.parametrize(
    ("check", "problem"),
    [("rm -rf /", "--check is refused by the guard"), ("  ", "--check is empty")],
)
def test_a_bad_check_is_one_line_and_exit_2(cli: Cli, check: str, problem: str) -> None:
    result = cli("cron", "add", "--every", "1h", "--deliver", "none", "--check", check, "x")
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert problem in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert cli("cron", "list", "--json").stdout.strip() == "[]"
