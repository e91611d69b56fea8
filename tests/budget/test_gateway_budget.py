"""`seam gateway` with its Telegram adapter against the fake Bot API (its own process, on
loopback): a model that calls a tool forever is stopped by `[budget] session_tokens`, the
reply tells the person which limit and how to raise it, and no request past the limit
reaches the provider."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("seam.plugins.chat.telegram")

from tests.gateway.test_gateway_telegram import OWNER, gateway_cli
from tests.gateway.test_gateway_telegram import fake_telegram as fake_telegram_fixture
from tests.support.fake_telegram import RemoteFakeTelegram
from tests.support.gateway_process import stop, wait_for
from tests.support.openai_server import OpenAIServer, tool_call_reply

fake_telegram = fake_telegram_fixture  # registers the fixture here


def said(fake: RemoteFakeTelegram, words: str) -> bool:
    return any(
        words in str(c["params"].get("text"))
        for c in fake.calls()
        if c["method"] in ("sendMessage", "editMessageText")
    )


def test_the_reply_says_the_limit_that_stopped_the_turn(
    tmp_path: Path, openai_server: OpenAIServer, fake_telegram: RemoteFakeTelegram
) -> None:
    cli = gateway_cli(tmp_path, openai_server, fake_telegram, "[budget]\nsession_tokens = 100\n")
    openai_server.push(*[tool_call_reply([("list_dir", '{"path": "."}')]) for _ in range(10)])
    gateway = cli.popen("gateway")
    try:
        fake_telegram.push_message("list the files, forever", chat_id=OWNER, user_id=OWNER)
        spent = "budget: this session has used 116 of 100 tokens"
        wait_for(lambda: said(fake_telegram, spent), "the budget reply", gateway)
    finally:
        stop(gateway)
    assert said(fake_telegram, "start a new session")
    assert len(openai_server.chat_requests) == 4  # the fifth call was never sent
