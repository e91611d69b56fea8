"""`seam gateway` with its Telegram adapter against the fake Bot API (its own process, on
loopback): a model that calls a tool forever is stopped by `[budget] session_tokens`, the
reply tells the person which limit and how to raise it, and no request past the limit
reaches the provider."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("seam.plugins.chat.telegram")

from tests.cli.conftest import make_cli
from tests.support.fake_telegram import DEFAULT_TOKEN, RemoteFakeTelegram
from tests.support.gateway_process import fake_process, stop, wait_for
from tests.support.openai_server import OpenAIServer, tool_call_reply

OWNER = 1001


@pytest.fixture
def fake_telegram() -> Iterator[RemoteFakeTelegram]:
    with fake_process("tests.support.fake_telegram") as url:
        yield RemoteFakeTelegram(url)


def said(fake: RemoteFakeTelegram, words: str) -> bool:
    return any(
        words in str(c["params"].get("text"))
        for c in fake.calls()
        if c["method"] in ("sendMessage", "editMessageText")
    )


def test_the_reply_says_the_limit_that_stopped_the_turn(
    tmp_path: Path, openai_server: OpenAIServer, fake_telegram: RemoteFakeTelegram
) -> None:
    cli = make_cli(
        tmp_path,
        {
            "OPENAI_BASE_URL": openai_server.base_url,
            "OPENAI_API_KEY": "test-key",
            "TELEGRAM_BOT_TOKEN": DEFAULT_TOKEN,
        },
    )
    cli.write_config(
        f'[gateway.telegram]\nbase_url = "{fake_telegram.base_url}"\nallow = ["{OWNER}"]\n'
        '[sandbox]\nbackend = "local"\n[budget]\nsession_tokens = 100\n'
    )
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
