"""`seam skills list | show | trust`, `/skills` and `/<skill-name>` in chat, run as the
real console script against the loopback OpenAI server."""

from __future__ import annotations

import pytest

from tests.cli.conftest import Cli, sent_messages
from tests.plugins.test_skills import write_skill
from tests.support.openai_server import OpenAIServer, text_reply

pytestmark = pytest.mark.in_process


def test_list_show_and_trust(cli: Cli) -> None:
    write_skill(cli.home / "skills", "triage", "Triage a bug report.", body="Reproduce first.")
    folder = write_skill(cli.project / ".agents" / "skills", "build", "Build the project.")

    listed = cli("skills", "list")
    assert listed.returncode == 0, listed.stderr
    assert "triage  [home]" in listed.stdout
    assert "build  [project]" in listed.stdout and "not offered: untrusted" in listed.stdout

    shown = cli("skills", "show", "triage")
    assert shown.returncode == 0, shown.stderr
    assert "description: Triage a bug report." in shown.stdout
    assert "Reproduce first." in shown.stdout
    review = cli("skills", "show", "build")  # shown for review before trusting it
    assert review.returncode == 0, review.stderr
    assert review.stdout.startswith("NOT OFFERED: untrusted")
    assert "description: Build the project." in review.stdout
    assert cli("skills", "show", "nope").returncode != 0

    trusted = cli("skills", "trust", ".agents/skills")
    assert trusted.returncode == 0, trusted.stderr
    assert f"trusted {folder}" in trusted.stdout
    assert "not offered" not in cli("skills", "list").stdout
    assert (cli.home / "skills-trust.json").is_file()


def test_chat_lists_skills_and_runs_a_turn_with_one_loaded(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    write_skill(cli.home / "skills", "triage", "Triage a bug report.", body="Reproduce first.")
    openai_server.push(text_reply("Reproduced."))

    result = cli("chat", stdin="/skills\n/triage the login bug\n/nope\n/exit\n", timeout=60)

    assert result.returncode == 0, result.stderr
    assert "triage  [home]" in result.stdout
    assert "Reproduced." in result.stdout
    assert "unknown command /nope" in result.stdout
    [user] = [m for m in sent_messages(openai_server, 0) if m["role"] == "user"]
    assert '<skill name="triage">' in user["content"] and "Reproduce first." in user["content"]
    assert user["content"].endswith("the login bug")
    system = sent_messages(openai_server, 0)[0]["content"]
    assert "- triage: Triage a bug report." in system
