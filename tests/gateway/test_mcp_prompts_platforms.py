"""MCP prompts on Slack and Discord (issue 26): the real `seam gateway` as a subprocess,
the platform a fake in its own process (slack-bolt over Socket Mode, discord.py), npm's
server-everything from the config, the model a scripted OpenAI-compatible server.

A typed `/server:prompt arg=value` runs the prompt as a turn on both; on Slack, where a
slash command must be registered and cannot hold a `:`, the registered `/mcp` runs it as
`/mcp server:prompt arg=value`; a bad line is answered with one line."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("seam.apps.gateway.runner")

from tests.cli.conftest import Cli
from tests.gateway.test_mcp_prompts import mcp_config
from tests.gateway.test_never_jam_platforms import _cli, fake_discord, fake_slack
from tests.support.fake_discord import OWNER_ID, RemoteFakeDiscord
from tests.support.fake_slack import RemoteFakeSlack
from tests.support.gateway_process import stop, wait_for
from tests.support.openai_server import OpenAIServer, text_reply

fake_slack = fake_slack  # the fixtures, registered here
fake_discord = fake_discord
DISCORD_CHANNEL = "1300000000000000077"


def contents(openai: OpenAIServer) -> list[object]:
    """The last user message of each model call."""
    return [r.body["messages"][-1]["content"] for r in openai.chat_requests]


def _scenario(
    cli: Cli,
    send: Callable[[str], None],
    has: Callable[[str], bool],
    extra: Callable[[subprocess.Popen[str]], None] | None = None,
) -> None:
    """A typed prompt runs, a bad one is answered; then `extra(gateway)`."""
    gateway = cli.popen("gateway")
    try:
        send("/everything:args-prompt city=Paris")
        wait_for(lambda: has("Sunny in Paris."), "the answer", gateway)
        send("/everything:args-prompt")
        wait_for(lambda: has("missing city"), "the error", gateway)
        if extra is not None:
            extra(gateway)
    finally:
        stop(gateway)


def test_slack_runs_prompts_typed_and_through_mcp(
    tmp_path: Path, openai_server: OpenAIServer, fake_slack: RemoteFakeSlack
) -> None:
    table = f'[gateway.slack]\nbase_url = "{fake_slack.base_url}"\nallow = ["U0001"]\n'
    tokens = {"SLACK_BOT_TOKEN": "xoxb-e2e", "SLACK_APP_TOKEN": "xapp-e2e"}
    cli = _cli(tmp_path, openai_server, tokens, table + mcp_config())
    openai_server.push(text_reply("Sunny in Paris."), text_reply("Rainy in Oslo."))

    def said() -> list[str]:
        return [
            str(c["params"].get("text"))
            for c in fake_slack.calls()
            if c["method"] in ("chat.postMessage", "chat.update")
        ]

    def has(part: str) -> bool:
        return any(part in text for text in said())

    def by_command(gateway: subprocess.Popen[str]) -> None:
        fake_slack.push_command("/mcp", "everything:args-prompt Oslo")
        wait_for(lambda: has("Rainy in Oslo."), "the /mcp answer", gateway)

    _scenario(
        cli,
        lambda text: fake_slack.push_message(text, channel="D0001", channel_type="im"),
        has,
        by_command,
    )
    assert contents(openai_server) == ["What's weather in Paris?", "What's weather in Oslo?"]
    assert not any("Traceback" in t or "don't know" in t for t in said())


def test_discord_runs_a_typed_prompt(
    tmp_path: Path, openai_server: OpenAIServer, fake_discord: RemoteFakeDiscord
) -> None:
    table = (
        f'[gateway.discord]\nbase_url = "{fake_discord.api_base}"\n'
        f'gateway_url = "{fake_discord.gateway_url}"\nallow = ["{OWNER_ID}"]\n'
    )
    cli = _cli(tmp_path, openai_server, {"DISCORD_BOT_TOKEN": "discord-e2e"}, table + mcp_config())
    openai_server.push(text_reply("Sunny in Paris."))

    def send(text: str) -> None:
        fake_discord.wait_identified()
        fake_discord.push_message(text, channel_id=DISCORD_CHANNEL, author_id=OWNER_ID)

    def has(part: str) -> bool:
        return any(
            part in str((c["body"] or {}).get("content"))
            for c in fake_discord.calls()
            if c["method"] in ("POST", "PATCH") and "/messages" in c["path"]
        )

    _scenario(cli, send, has)
    assert contents(openai_server) == ["What's weather in Paris?"]
