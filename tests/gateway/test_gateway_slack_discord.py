"""`seam gateway` end to end on Slack (Socket Mode) and Discord: the real command as a
subprocess, each adapter on its official SDK talking to a fake platform (its own process,
on loopback), the model a scripted OpenAI-compatible server: a message that needs
`read_file` is answered, and a message posted while the gateway was down is answered once
it is back."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import Cli, make_cli
from tests.gateway.test_gateway_telegram import stop, wait_for
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply

ROOT = Path(__file__).resolve().parents[2]


def _start(module: str) -> tuple[subprocess.Popen[str], int]:
    process = subprocess.Popen(
        [sys.executable, "-m", module],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert process.stdout is not None
    return process, int(process.stdout.readline())


class Platform:
    """One fake platform as these tests use it: its config, how a person writes, and the
    texts the bot put in the chat."""

    name: str
    env: dict[str, str]

    def config(self) -> str:
        raise NotImplementedError

    def ready(self) -> None:
        """Until the gateway is connected, where the platform needs it."""

    def say(self, text: str) -> None:
        raise NotImplementedError

    def texts(self) -> list[str]:
        raise NotImplementedError


class Slack(Platform):
    name = "slack"
    user = "U0001"
    env = {"SLACK_BOT_TOKEN": "xoxb-test", "SLACK_APP_TOKEN": "xapp-test"}

    def __init__(self, port: int) -> None:
        from tests.support.fake_slack import RemoteFakeSlack

        self.fake = RemoteFakeSlack(f"http://127.0.0.1:{port}")

    def config(self) -> str:
        return f'[gateway.slack]\nbase_url = "{self.fake.base_url}"\nallow = ["{self.user}"]\n'

    def say(self, text: str) -> None:
        self.fake.push_message(text, channel="D0001", channel_type="im", user=self.user)

    def texts(self) -> list[str]:
        return [
            str(c["params"].get("text"))
            for c in self.fake.calls()
            if c["method"] in ("chat.postMessage", "chat.update")
        ]


class Discord(Platform):
    name = "discord"
    env = {"DISCORD_BOT_TOKEN": "discord-test-token"}

    def __init__(self, port: int) -> None:
        from tests.support.fake_discord import OWNER_ID, RemoteFakeDiscord

        self.fake = RemoteFakeDiscord(f"http://127.0.0.1:{port}")
        self.user = OWNER_ID

    def config(self) -> str:
        return (
            f'[gateway.discord]\nbase_url = "{self.fake.api_base}"\n'
            f'gateway_url = "{self.fake.gateway_url}"\nallow = ["{self.user}"]\n'
        )

    def ready(self) -> None:
        # Discord keeps no queue for a bot that never saw the channel: only a connected
        # bot hears a first message (later ones it catches up from the history).
        self.fake.wait_identified(1)

    def say(self, text: str) -> None:
        self.fake.push_message(text, channel_id="1300000000000000009", author_id=self.user)

    def texts(self) -> list[str]:
        out = []
        for c in self.fake.calls():
            if c["method"] in ("POST", "PATCH") and "/messages" in c["path"]:
                body = c["body"]
                if isinstance(body, str):
                    try:
                        body = json.loads(body)
                    except ValueError:
                        continue
                if isinstance(body, dict) and "content" in body:
                    out.append(str(body["content"]))
        return out


PLATFORMS: dict[str, tuple[str, str, Callable[[int], Platform]]] = {
    "slack": ("seam.plugins.chat.slack", "tests.support.fake_slack", Slack),
    "discord": ("seam.plugins.chat.discord", "tests.support.fake_discord", Discord),
}


@pytest.fixture(params=sorted(PLATFORMS))
def platform(request: pytest.FixtureRequest) -> Iterator[Platform]:
    adapter_module, fake_module, make = PLATFORMS[request.param]
    pytest.importorskip(adapter_module)
    pytest.importorskip(fake_module)
    process, port = _start(fake_module)
    try:
        yield make(port)
    finally:
        process.terminate()
        process.wait(timeout=10)


def cli_for(tmp_path: Path, openai: OpenAIServer, platform: Platform) -> Cli:
    env: dict[str, Any] = {
        "OPENAI_BASE_URL": openai.base_url,
        "OPENAI_API_KEY": "test-key",
        **platform.env,
    }
    cli = make_cli(tmp_path, env)
    cli.write_config(platform.config() + '[sandbox]\nbackend = "local"\n')
    return cli


def test_a_message_is_answered_after_a_read_file_round_trip(
    tmp_path: Path, openai_server: OpenAIServer, platform: Platform
) -> None:
    cli = cli_for(tmp_path, openai_server, platform)
    (cli.project / "note.txt").write_text("the code is 7431\n", encoding="utf-8")
    answer = "It says the code is 7431."
    openai_server.push(
        tool_call_reply([("read_file", json.dumps({"path": "note.txt"}))]), text_reply(answer)
    )
    gateway = cli.popen("gateway")
    try:
        platform.ready()
        platform.say("What does note.txt say?")
        wait_for(lambda: platform.texts().count(answer) == 1, "the answer", gateway)
    finally:
        err = stop(gateway)
    assert f"running {platform.name}" in err
    tool = [m for m in openai_server.chat_requests[1].body["messages"] if m["role"] == "tool"]
    assert "7431" in str(tool[0]["content"])
    assert platform.texts().count(answer) == 1


def test_a_message_sent_while_the_gateway_was_down_is_answered_when_it_is_back(
    tmp_path: Path, openai_server: OpenAIServer, platform: Platform
) -> None:
    cli = cli_for(tmp_path, openai_server, platform)
    openai_server.push(text_reply("First answer."), text_reply("Second answer."))
    gateway = cli.popen("gateway")
    try:
        platform.ready()
        platform.say("one")
        wait_for(lambda: "First answer." in platform.texts(), "the first answer", gateway)
    finally:
        stop(gateway)
    platform.say("two")  # nobody is listening
    again = cli.popen("gateway")
    try:
        wait_for(lambda: "Second answer." in platform.texts(), "the second answer", again)
    finally:
        stop(again)
    assert platform.texts().count("First answer.") == 1
    assert platform.texts().count("Second answer.") == 1
    assert len(openai_server.chat_requests) == 2
