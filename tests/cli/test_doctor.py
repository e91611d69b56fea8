"""`seam doctor` against the loopback provider, and with a broken config file."""

from __future__ import annotations

import sqlite3

import pytest

from tests.cli.conftest import Cli, make_cli
from tests.support.openai_server import OpenAIServer, error_reply

pytestmark = pytest.mark.in_process


def lines_by_check(stdout: str) -> dict[str, str]:
    """`✓ name: detail` lines keyed by name (the mark kept at the front of the value)."""
    checks = {}
    for line in stdout.splitlines():
        if line[:2] in ("✓ ", "✗ "):
            name, _, detail = line[2:].partition(": ")
            checks[name] = f"{line[0]} {detail}"
    return checks


def test_doctor_passes_with_a_working_provider(cli: Cli, openai_server: OpenAIServer) -> None:
    result = cli("doctor")

    assert result.returncode == 0, result.stdout + result.stderr
    checks = lines_by_check(result.stdout)
    assert checks["provider"].startswith("✓ openai-compatible at " + openai_server.base_url)
    assert "OPENAI_BASE_URL is set" in checks["provider"]
    assert checks["model endpoint"].startswith("✓ ") and "1 models" in checks["model endpoint"]
    assert checks["session store"].startswith(f"✓ {cli.home / 'sessions.db'} opens")
    assert checks["personalities"].startswith("✓ ")
    assert "read_file" in checks["tools"]
    assert [r.path for r in openai_server.requests] == ["/v1/models"]


def test_doctor_reports_a_rejected_key_with_a_hint(cli: Cli, openai_server: OpenAIServer) -> None:
    openai_server.push_models(error_reply(401))

    result = cli("doctor")

    assert result.returncode == 1
    endpoint = lines_by_check(result.stdout)["model endpoint"]
    assert endpoint.startswith("✗ ") and "auth" in endpoint and "check OPENAI_API_KEY" in endpoint


def test_doctor_names_a_broken_config_file(cli: Cli) -> None:
    path = cli.write_config("[agent]\nmax_iterations = 0\n")

    result = cli("doctor")

    assert result.returncode == 2
    config = lines_by_check(result.stdout)["config"]
    assert config.startswith(f"✗ {path}") and "agent.max_iterations" in config


def test_doctor_without_a_provider_checks_the_local_model(tmp_path) -> None:
    cli = make_cli(tmp_path, {}, in_process=True)

    result = cli("doctor")

    checks = lines_by_check(result.stdout)
    assert checks["provider"] == "✓ local (no provider configured: using the local model)"
    assert "model endpoint" not in checks
    assert "local model" in checks or "llama-cpp-python" in checks


def test_doctor_reports_a_damaged_session_store(cli: Cli) -> None:
    assert cli("sessions", "list").returncode == 0  # creates the store
    db = sqlite3.connect(cli.home / "sessions.db", isolation_level=None)
    db.execute("INSERT INTO sessions (key, created_at, updated_at) VALUES ('s', 0, 0)")
    db.execute(
        "INSERT INTO messages (session_key, idx, role, content) VALUES ('s', 0, 'user', 'hi')"
    )
    # Indexed, as the store's catch-up leaves it (sqlite_search_index).
    db.execute("INSERT INTO messages_fts (rowid, content) SELECT id, content FROM messages")
    db.execute("UPDATE search_progress SET indexed_to = (SELECT max(id) FROM messages)")
    db.execute("DROP TRIGGER messages_fts_delete")  # the index will miss the delete below
    db.execute("DELETE FROM messages")
    db.close()

    result = cli("doctor")
    assert result.returncode != 0
    store = lines_by_check(result.stdout)["session store"]
    assert store.startswith(f"✗ {cli.home / 'sessions.db'}: search index messages_fts:")


def test_doctor_warns_when_the_fixed_prompt_leaves_too_little_of_the_window(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    roomy = lines_by_check(cli("doctor").stdout)
    assert roomy["context window"].startswith("✓ 128,000 tokens; the fixed prompt of default")

    cli.write_config("[context]\nwindow = 2000\n")
    result = cli("doctor")

    assert result.returncode == 1, result.stdout + result.stderr
    check = lines_by_check(result.stdout)["context window"]
    assert check.startswith("✗ personality default: ")
    assert "the system prompt and tool schemas take ~" in check
    assert "of the 2,000-token context window" in check
    assert "Raise [context] window" in check
