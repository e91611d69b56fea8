"""MCP prompts in a gateway chat (issue 26): the real `seam gateway` as a subprocess,
python-telegram-bot against the fake Bot API, npm's server-everything from the config,
the model a scripted OpenAI-compatible server.

The typed line `/everything:args-prompt city=Paris` (Telegram marks only `/everything`
as a bot command; the rest is text) runs a turn with the prompt's text in the sender's
session, for the owner and for a paired stranger (their own tenant, the same servers);
a bad line is a one-line error; `/mcp` lists the prompts; `/help` names them."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("seam.plugins.chat.telegram")

from pathlib import Path

from seam.apps.gateway.commands import parse_command
from seam.core.execution import InMemoryExecutionStore
from seam.core.scripted_model import ScriptedModel
from seam.wiring.mcp import PromptError, command_text
from tests.gateway.fake_chat import FakePlatform
from tests.gateway.harness import gateway_running, make_runtime, until
from tests.gateway.test_gateway_telegram import OWNER, fake_telegram, gateway_cli
from tests.gateway.test_never_jam_telegram import has, said
from tests.mcp.installed import EVERYTHING, need
from tests.support.fake_telegram import RemoteFakeTelegram
from tests.support.gateway_process import stop, wait_for
from tests.support.openai_server import OpenAIServer, text_reply

fake_telegram = fake_telegram  # the fixture, registered here
STRANGER = 2002
PROMPT = "/everything:args-prompt"
# What Telegram marks in `/everything:args-prompt ...`: the command part before the `:`.
ENTITY = [{"type": "bot_command", "offset": 0, "length": len("/everything")}]


def mcp_config() -> str:
    need(EVERYTHING)
    return f"[mcp.servers.everything]\ncommand = {json.dumps([str(EVERYTHING), 'stdio'])}\n"


def last_user_text(openai: OpenAIServer, index: int) -> object:
    return openai.chat_requests[index].body["messages"][-1]["content"]


def test_owner_and_paired_stranger_run_a_prompt(
    tmp_path: Path, openai_server: OpenAIServer, fake_telegram: RemoteFakeTelegram
) -> None:
    cli = gateway_cli(tmp_path, openai_server, fake_telegram, mcp_config())
    openai_server.push(text_reply("Sunny in Paris."), text_reply("Rainy in Oslo."))
    gateway = cli.popen("gateway")
    try:
        fake_telegram.push_message(f"{PROMPT} city=Paris", chat_id=OWNER, entities=ENTITY)
        wait_for(lambda: has(fake_telegram, OWNER, "Sunny in Paris."), "the answer", gateway)
        assert last_user_text(openai_server, 0) == "What's weather in Paris?"
        fake_telegram.push_message(PROMPT, chat_id=OWNER, entities=ENTITY)
        wait_for(lambda: has(fake_telegram, OWNER, "missing city"), "the error", gateway)
        fake_telegram.push_message("/everything:nope", chat_id=OWNER, entities=ENTITY)
        wait_for(lambda: has(fake_telegram, OWNER, "has no prompt 'nope'"), "no prompt", gateway)
        fake_telegram.push_message("/mcp", chat_id=OWNER)
        wait_for(lambda: has(fake_telegram, OWNER, "prompt: /everything:args"), "/mcp", gateway)
        # A paired stranger: their waiting prompt runs in their own tenant once approved.
        fake_telegram.push_message(f"{PROMPT} Oslo", chat_id=STRANGER, user_id=STRANGER)
        wait_for(lambda: has(fake_telegram, STRANGER, "seam pairing"), "the code", gateway)
        code = cli("pairing", "list").stdout.split("\t")[1]
        assert cli("pairing", "approve", code).returncode == 0
        wait_for(lambda: has(fake_telegram, STRANGER, "Rainy in Oslo."), "theirs", gateway)
        assert last_user_text(openai_server, 1) == "What's weather in Oslo?"
        fake_telegram.push_message("/mcp", chat_id=STRANGER, user_id=STRANGER)
        wait_for(lambda: has(fake_telegram, STRANGER, "prompt: /everything"), "/mcp", gateway)
        fake_telegram.push_message("/help", chat_id=STRANGER, user_id=STRANGER)
        wait_for(lambda: has(fake_telegram, STRANGER, "/server:prompt"), "/help", gateway)
    finally:
        stop(gateway)
    assert len(openai_server.chat_requests) == 2
    owner_lines = said(fake_telegram, OWNER)
    error = next(t for t in owner_lines if "missing city" in t)
    assert error.count("\n") == 0 and "usage: /everything:args-prompt city=…" in error
    assert "everything  ready" in "\n".join(owner_lines)  # the owner sees the servers
    stranger_mcp = next(t for t in said(fake_telegram, STRANGER) if "prompt: /every" in t)
    assert "stdio" not in stranger_mcp  # others see only the prompts
    assert not any("Traceback" in t or "don't know" in t for t in owner_lines)


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("/time:get_time", "prompt"),
        ("/time:get_time@seam_bot timezone=UTC", "prompt"),
        ("/mcp time:get_time", "mcp"),
        ("/new", "new"),
        ("/etc/hosts:1 is odd", None),
        ("/:x", "unknown"),
        ("what time is it", None),
    ],
)
def test_the_gateway_parser_routes_prompt_lines(text: str, command: str | None) -> None:
    assert parse_command(text) == command


async def test_a_runtime_without_mcp_answers_one_line() -> None:
    with pytest.raises(PromptError, match=r"^unknown command /time:get_time: no MCP servers"):
        await command_text(None, "/time:get_time timezone=UTC")


async def test_without_mcp_servers_prompt_lines_answer_one_line(tmp_path: Path) -> None:
    """A runtime built without MCP servers: each line is answered, no turn runs."""
    model = ScriptedModel([])
    store = InMemoryExecutionStore()
    platform = FakePlatform()
    async with gateway_running(make_runtime(model, store), platform, tmp_path):
        for line in ("/time:get_time", "/mcp reload", "/mcp time:get_time", "/mcp"):
            count = len(platform.sent_texts())
            platform.say(line)
            await until(platform, lambda n=count: len(platform.sent_texts()) > n, line)
    texts = platform.sent_texts()
    assert texts[0] == (
        "unknown command /time:get_time: no MCP servers here. /mcp lists the prompts."
    )
    assert texts[1] == "Use /mcp, or /mcp server:prompt arg=value to run a prompt."
    assert texts[2] == texts[0]
    assert "no MCP servers configured" in texts[3]
    assert await store.submissions() == []
