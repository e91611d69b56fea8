"""`seam gateway` end to end on Discord: the real command as a subprocess, its Discord
adapter (discord.py) talking to a fake Discord (REST + gateway) in its own process, the
model a scripted OpenAI-compatible server."""

from __future__ import annotations

import inspect
import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Runs once `seam gateway` (apps/gateway, the gateway branch) is in the tree.
pytest.importorskip("seam.apps.gateway.runner")

from tests.cli.conftest import Cli, make_cli
from tests.support.fake_discord import OWNER_ID, RemoteFakeDiscord
from tests.support.gateway_process import fake_process, stop, wait_for
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply


def _gateway_names_catch_up_points() -> bool:
    """Whether the gateway tells a restarted adapter where each chat stopped
    (`catch_up_from`); Discord keeps nothing for an offline bot without it."""
    from seam.apps.gateway import runner

    return "catch_up_from" in inspect.getsource(runner)


DM = "1300000000000000077"


@pytest.fixture
def fake_discord() -> Iterator[RemoteFakeDiscord]:
    with fake_process("tests.support.fake_discord") as url:
        yield RemoteFakeDiscord(url)


def gateway_cli(tmp_path: Path, openai: OpenAIServer, fake: RemoteFakeDiscord) -> Cli:
    cli = make_cli(
        tmp_path,
        {
            "OPENAI_BASE_URL": openai.base_url,
            "OPENAI_API_KEY": "test-key",
            "DISCORD_BOT_TOKEN": "discord-e2e",
        },
    )
    cli.write_config(
        f'[gateway.discord]\nbase_url = "{fake.api_base}"\ngateway_url = "{fake.gateway_url}"\n'
        f'allow = ["{OWNER_ID}"]\n[sandbox]\nbackend = "local"\n'
    )
    return cli


def sent(fake: RemoteFakeDiscord) -> list[dict[str, Any]]:
    return [
        c
        for c in fake.calls()
        if (c["method"] == "POST" and c["path"].endswith("/messages"))
        or (c["method"] == "PATCH" and "/messages/" in c["path"])
    ]


def finals(fake: RemoteFakeDiscord, answer: str) -> int:
    return sum(1 for c in sent(fake) if (c["body"] or {}).get("content") == answer)


def test_a_dm_is_answered_after_a_read_file_round_trip(
    tmp_path: Path, openai_server: OpenAIServer, fake_discord: RemoteFakeDiscord
) -> None:
    cli = gateway_cli(tmp_path, openai_server, fake_discord)
    (cli.project / "note.txt").write_text("the code is 7431\n", encoding="utf-8")
    openai_server.push(
        tool_call_reply([("read_file", json.dumps({"path": "note.txt"}))]),
        text_reply("It says the code is __7431__."),
    )
    gateway = cli.popen("gateway")
    try:
        fake_discord.wait_identified()
        fake_discord.push_message("What does note.txt say?", channel_id=DM)
        wait_for(
            lambda: finals(fake_discord, "It says the code is **7431**.") == 1, "answer", gateway
        )
    finally:
        err = stop(gateway)
    assert "discord" in err
    tool = [m for m in openai_server.chat_requests[1].body["messages"] if m["role"] == "tool"]
    assert "7431" in str(tool[0]["content"])
    assert any(c["path"].endswith(f"/channels/{DM}/typing") for c in fake_discord.calls())


def test_a_strangers_button_is_refused_and_the_owners_press_answers(
    tmp_path: Path, openai_server: OpenAIServer, fake_discord: RemoteFakeDiscord
) -> None:
    cli = gateway_cli(tmp_path, openai_server, fake_discord)
    openai_server.push(
        tool_call_reply([("terminal", json.dumps({"command": "touch made.txt"}))]),
        text_reply("Made it."),
    )
    gateway = cli.popen("gateway")
    try:
        fake_discord.wait_identified()
        fake_discord.push_message("make a file", channel_id=DM)

        def asking() -> dict[str, Any] | None:
            for c in sent(fake_discord):
                if (c["body"] or {}).get("components"):
                    return c
            return None

        wait_for(lambda: asking() is not None, "the approval buttons", gateway)
        call = asking()
        assert call is not None
        buttons = [b for row in call["body"]["components"] for b in row["components"]]
        assert [b["label"] for b in buttons] == ["Once", "This session", "Always", "Deny", "Never"]
        history = fake_discord.history(DM)
        asked = next(m for m in history if m.get("components"))
        fake_discord.push_button(
            buttons[0]["custom_id"], asked["id"], DM, user_id="1100000000000000666"
        )

        def refusals() -> list[dict[str, Any]]:
            return [c for c in fake_discord.calls() if c["path"].endswith("/callback")]

        wait_for(lambda: bool(refusals()), "the refusal", gateway)
        assert refusals()[0]["body"]["data"]["content"] == "not yours"
        assert not (cli.project / "made.txt").exists()
        fake_discord.push_button(buttons[0]["custom_id"], asked["id"], DM)
        wait_for(lambda: finals(fake_discord, "Made it.") == 1, "the answer", gateway)
    finally:
        stop(gateway)
    assert (cli.project / "made.txt").exists()


def test_sigkill_after_receipt_then_restart_answers_once(
    tmp_path: Path, openai_server: OpenAIServer, fake_discord: RemoteFakeDiscord
) -> None:
    cli = gateway_cli(tmp_path, openai_server, fake_discord)
    openai_server.push(text_reply("never finished").stalled(), text_reply("Answered once."))
    gateway = cli.popen("gateway")
    try:
        fake_discord.wait_identified()
        fake_discord.push_message("hello?", channel_id=DM)
        wait_for(lambda: len(openai_server.chat_requests) == 1, "the model call", gateway)
    finally:
        gateway.send_signal(signal.SIGKILL)
        gateway.communicate(timeout=10)
    openai_server.release()
    restarted = cli.popen("gateway")
    try:
        wait_for(lambda: finals(fake_discord, "Answered once.") == 1, "the answer", restarted)
    finally:
        stop(restarted)
    assert finals(fake_discord, "Answered once.") == 1
    assert finals(fake_discord, "never finished") == 0


def test_sigkill_before_delivery_then_restart_delivers_once(
    tmp_path: Path, openai_server: OpenAIServer, fake_discord: RemoteFakeDiscord
) -> None:
    cli = gateway_cli(tmp_path, openai_server, fake_discord)
    openai_server.push(text_reply("Delivered once."))
    # Discord refuses the next three messages (503): the preview and the answer's first
    # attempt fail before the kill, one more after the restart.
    fake_discord.fail("POST", f"/channels/{DM}/messages", times=3)
    gateway = cli.popen("gateway")
    try:
        fake_discord.wait_identified()
        fake_discord.push_message("hi", channel_id=DM)
        wait_for(lambda: len(_attempts(fake_discord)) >= 2, "failed sends", gateway)
    finally:
        gateway.send_signal(signal.SIGKILL)
        gateway.communicate(timeout=10)
    restarted = cli.popen("gateway")
    try:
        wait_for(lambda: len(_accepted(fake_discord)) >= 1, "delivery", restarted)
    finally:
        stop(restarted)
    assert _accepted(fake_discord) == ["Delivered once."]
    assert len(openai_server.chat_requests) == 1  # answered once, delivered after


def _attempts(fake: RemoteFakeDiscord) -> list[dict[str, Any]]:
    return [
        c for c in fake.calls() if c["method"] == "POST" and c["path"] == f"/channels/{DM}/messages"
    ]


def _accepted(fake: RemoteFakeDiscord) -> list[str]:
    """The bot's messages Discord accepted into the channel."""
    return [m["content"] for m in fake.history(DM) if m["author"]["id"] != OWNER_ID]


@pytest.mark.skipif(
    not _gateway_names_catch_up_points(),
    reason="the gateway does not call DiscordAdapter.catch_up_from yet",
)
def test_a_message_sent_while_the_gateway_was_down_is_answered(
    tmp_path: Path, openai_server: OpenAIServer, fake_discord: RemoteFakeDiscord
) -> None:
    cli = gateway_cli(tmp_path, openai_server, fake_discord)
    openai_server.push(text_reply("First answer."), text_reply("Caught up."))
    gateway = cli.popen("gateway")
    try:
        fake_discord.wait_identified()
        fake_discord.push_message("first", channel_id=DM)
        wait_for(lambda: finals(fake_discord, "First answer.") == 1, "the first answer", gateway)
    finally:
        stop(gateway)
    # Discord keeps no message for an offline bot: it is only in the channel's history.
    fake_discord.push_message("are you there?", channel_id=DM)
    restarted = cli.popen("gateway")
    try:
        wait_for(lambda: finals(fake_discord, "Caught up.") == 1, "the caught-up answer", restarted)
    finally:
        stop(restarted)
    assert len(openai_server.chat_requests) == 2
    assert finals(fake_discord, "First answer.") == 1
