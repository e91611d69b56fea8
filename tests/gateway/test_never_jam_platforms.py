"""Gateways never jam (issue 26), on Slack and on Discord: the real `seam gateway` as a
subprocess, the platform a fake in its own process (slack-bolt over Socket Mode,
discord.py), the model a scripted OpenAI-compatible server. `/new` then `/usage`
answers; a poisoned update (one a trigger on the gateway's SQLite file refuses to
store: a real store fault; discord.py with orjson installed cannot even parse the lone
surrogate the Telegram test sends) ends as dead after its three tries while another chat
is answered; `seam gateway status` lists
it. The Telegram test (`test_never_jam_telegram.py`) adds a restart."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

pytest.importorskip("seam.apps.gateway.runner")

from tests.cli.conftest import Cli, make_cli
from tests.support.fake_discord import OWNER_ID, RemoteFakeDiscord
from tests.support.fake_slack import RemoteFakeSlack
from tests.support.gateway_process import fake_process, sql, stop, wait_for
from tests.support.openai_server import OpenAIServer, text_reply

POISON = "tell me about the poisoned well"
T = TypeVar("T")


def _cli(tmp_path: Path, openai: OpenAIServer, tokens: dict[str, str], table: str) -> Cli:
    env = {"OPENAI_BASE_URL": openai.base_url, "OPENAI_API_KEY": "test-key", **tokens}
    cli = make_cli(tmp_path, env)
    cli.write_config(table + '[sandbox]\nbackend = "local"\n')
    return cli


def _run_scenario(
    cli: Cli,
    openai: OpenAIServer,
    send: Callable[[str, str], None],
    said: Callable[[str], list[str]],
    owner: str,
    other: str,
) -> None:
    """`send(chat, text)`, `said(chat)`: the platform's side. The owner's `/new` and
    `/usage` answer; the other chat's poison is told, retried and dead, and the owner's
    message in between is answered without waiting for it."""

    def has(chat: str, part: str) -> bool:
        return any(part in text for text in said(chat))

    openai.push(text_reply("Hi owner."))
    gateway = cli.popen("gateway")
    try:
        send(owner, "/new")
        wait_for(lambda: has(owner, "Started a new conversation."), "/new", gateway)
        send(owner, "/usage")
        wait_for(lambda: has(owner, "No model calls"), "/usage", gateway)
        sql(
            cli.home / "sessions.db",
            "CREATE TRIGGER poison BEFORE INSERT ON submissions WHEN NEW.input LIKE "
            "'%poisoned well%' BEGIN SELECT RAISE(ABORT, 'injected store fault'); END",
        )
        send(other, POISON)
        wait_for(lambda: has(other, "could not handle"), "the error", gateway)
        send(owner, "hello")
        wait_for(lambda: has(owner, "Hi owner."), "the owner's answer", gateway)
        wait_for(lambda: has(other, "gave up"), "the dead notice", gateway)
        status = cli("gateway", "status")
    finally:
        stop(gateway)
    assert status.returncode == 0, status.stderr
    assert "updates: 1 dead" in status.stdout
    assert sum("gave up" in t for t in said(other)) == 1
    assert len(openai.chat_requests) == 1


def _serving(module: str, remote: Callable[[str], T]) -> Iterator[T]:
    """The fake platform `module` in its own process, as its `remote` client."""
    with fake_process(module) as url:
        yield remote(url)


@pytest.fixture
def fake_slack() -> Iterator[RemoteFakeSlack]:
    yield from _serving("tests.support.fake_slack", RemoteFakeSlack)


@pytest.fixture
def fake_discord() -> Iterator[RemoteFakeDiscord]:
    yield from _serving("tests.support.fake_discord", RemoteFakeDiscord)


def test_slack_never_jams(
    tmp_path: Path, openai_server: OpenAIServer, fake_slack: RemoteFakeSlack
) -> None:
    users = {"D0001": "U0001", "D0002": "U0002"}
    table = f'[gateway.slack]\nbase_url = "{fake_slack.base_url}"\nallow = ["U0001", "U0002"]\n'
    tokens = {"SLACK_BOT_TOKEN": "xoxb-e2e", "SLACK_APP_TOKEN": "xapp-e2e"}
    cli = _cli(tmp_path, openai_server, tokens, table)

    def send(channel: str, text: str) -> None:
        fake_slack.push_message(text, channel=channel, channel_type="im", user=users[channel])

    def said(channel: str) -> list[str]:
        return [
            str(c["params"].get("text"))
            for c in fake_slack.calls()
            if c["method"] in ("chat.postMessage", "chat.update")
            and c["params"].get("channel") == channel
        ]

    _run_scenario(cli, openai_server, send, said, "D0001", "D0002")


def test_discord_never_jams(
    tmp_path: Path, openai_server: OpenAIServer, fake_discord: RemoteFakeDiscord
) -> None:
    other_user = "1100000000000000004"
    authors = {"1300000000000000077": OWNER_ID, "1300000000000000078": other_user}
    table = (
        f'[gateway.discord]\nbase_url = "{fake_discord.api_base}"\n'
        f'gateway_url = "{fake_discord.gateway_url}"\nallow = ["{OWNER_ID}", "{other_user}"]\n'
    )
    cli = _cli(tmp_path, openai_server, {"DISCORD_BOT_TOKEN": "discord-e2e"}, table)
    identified = False

    def send(channel: str, text: str) -> None:
        nonlocal identified
        if not identified:
            fake_discord.wait_identified()
            identified = True
        fake_discord.push_message(text, channel_id=channel, author_id=authors[channel])

    def said(channel: str) -> list[str]:
        return [
            str((c["body"] or {}).get("content"))
            for c in fake_discord.calls()
            if f"/channels/{channel}/messages" in c["path"] and c["method"] in ("POST", "PATCH")
        ]

    _run_scenario(cli, openai_server, send, said, *authors)
