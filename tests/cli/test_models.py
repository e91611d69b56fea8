"""`seam models` lists every configured provider and checks each."""

from __future__ import annotations

import pytest

from tests.cli.conftest import Cli
from tests.support.openai_server import OpenAIServer, closed_port, error_reply

pytestmark = pytest.mark.in_process


def test_models_checks_main_and_fallback(cli: Cli, openai_server: OpenAIServer) -> None:
    dead = closed_port()
    cli.write_config(
        '[model]\nfallback = ["anthropic:claude-haiku-4-5"]\n'
        f'[anthropic]\nbase_url = "http://127.0.0.1:{dead}"\nmax_retries = 0\n'
    )
    cli.env["ANTHROPIC_API_KEY"] = "sk-ant-test-0000"
    result = cli("models", "--timeout", "5")
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("✓ main") and "openai:gpt-4o-mini" in lines[0]
    assert lines[1].startswith("✗ fallback 1") and "anthropic:claude-haiku-4-5" in lines[1]
    assert "sk-ant-test-0000" not in result.stdout


def test_models_reports_a_rejected_key(cli: Cli, openai_server: OpenAIServer) -> None:
    openai_server.push_models(error_reply(401))
    result = cli("models")
    assert result.returncode == 1
    assert "auth" in result.stdout and result.stdout.startswith("✗ main")
