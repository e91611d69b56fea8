"""`seam heartbeat run | status` as a person runs them: a real subprocess, the SQLite store,
and a loopback OpenAI-compatible server standing in for the model."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import Cli
from tests.support.openai_server import OpenAIServer, text_reply, usage

pytestmark = pytest.mark.in_process


def setup(cli: Cli) -> None:
    cli.home.mkdir(parents=True, exist_ok=True)
    (cli.home / "config.toml").write_text('[heartbeat]\nevery = "30m"\ndeliver = "file:beats.md"\n')
    (cli.home / "HEARTBEAT.md").write_text("- Is the backup disk over 90% full?\n")
    (cli.project / "AGENTS.md").write_text("Project rules: always use tabs.\n")


def test_a_beat_is_lean_and_its_finding_is_queued(cli: Cli, openai_server: OpenAIServer) -> None:
    setup(cli)
    openai_server.push(text_reply("HEARTBEAT_OK", usage_body=usage(140, 3)))
    openai_server.push(text_reply("The backup disk is 95% full.", usage_body=usage(141, 9)))

    first = cli("heartbeat", "run")
    assert first.returncode == 0, first.stderr
    assert " ok " in first.stdout and "143 tokens (140 in)" in first.stdout
    body = openai_server.chat_requests[0].body
    assert "tools" not in body or body["tools"] == []
    system = body["messages"][0]["content"]
    assert "Is the backup disk over 90% full?" in system
    assert "always use tabs" not in system

    second = cli("heartbeat", "run")
    assert second.returncode == 0, second.stderr
    assert "delivered" in second.stdout and "queued" in second.stdout

    status = cli("heartbeat", "status")
    assert status.returncode == 0, status.stderr
    lines = status.stdout.splitlines()
    assert lines[0] == "heartbeat: every 30m as default, delivers to file:beats.md"
    assert lines[1].startswith("next due: ")
    assert "last 2 runs: 293 tokens" in status.stdout
    ledger = [json.loads(x) for x in (cli.home / "heartbeat.jsonl").read_text().splitlines()]
    assert [run["status"] for run in ledger] == ["ok", "delivered"]


def test_quiet_hours_skip_without_a_model_call(cli: Cli, openai_server: OpenAIServer) -> None:
    setup(cli)
    assert cli("dnd", "on").returncode == 0
    result = cli("heartbeat", "run")
    assert result.returncode == 0, result.stderr
    assert "skipped" in result.stdout and "quiet hours" in result.stdout
    assert openai_server.chat_requests == []
