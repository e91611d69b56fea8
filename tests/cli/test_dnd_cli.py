"""`seam dnd on|off|status` and `/dnd` in chat, as a person runs them (real subprocesses)."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import Cli
from tests.support.openai_server import OpenAIServer

pytestmark = pytest.mark.in_process


def test_on_status_off_round_trip(cli: Cli) -> None:
    cli.home.mkdir(parents=True, exist_ok=True)
    rule = '{start = "22:00", end = "07:00", weekdays = ["fri"], tz = "Europe/Berlin"}'
    (cli.home / "config.toml").write_text(f"[dnd]\nrules = [{rule}]\n")
    off = cli("dnd")
    assert off.returncode == 0, off.stderr
    assert off.stdout.startswith("do not disturb: off\n")
    assert "rules: 22:00-07:00 fri Europe/Berlin" in off.stdout

    on = cli("dnd", "on")
    assert on.returncode == 0, on.stderr
    assert on.stdout.startswith("do not disturb is on: deliveries wait until seam dnd off")
    assert json.loads((cli.home / "dnd.json").read_text())["indefinite"] is True
    status = cli("dnd", "status")
    assert status.stdout.startswith("do not disturb: on since ")

    assert cli("dnd", "off").stdout.startswith("do not disturb is off\n")
    assert json.loads((cli.home / "dnd.json").read_text())["indefinite"] is False


def test_a_bad_action_is_a_usage_error(cli: Cli) -> None:
    result = cli("dnd", "maybe")
    assert result.returncode == 2
    assert result.stderr == "seam: dnd 'maybe': use seam dnd on, off or status\n"
    assert not (cli.home / "dnd.json").exists()


def test_slash_dnd_in_chat(cli: Cli, openai_server: OpenAIServer) -> None:
    result = cli("chat", stdin="/dnd on\n/dnd\n/dnd off\n/dnd sideways\n")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "do not disturb is on" in out
    assert "do not disturb: on since" in out
    assert "do not disturb is off" in out
    assert "error: usage: /dnd, /dnd on or /dnd off" in out
    assert openai_server.chat_requests == []
