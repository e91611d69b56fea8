"""`seam gateway` end to end on Slack: the real command as a subprocess, its Slack adapter
(slack-bolt over Socket Mode) talking to a fake Slack in its own process, the model a
scripted OpenAI-compatible server."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Runs once `seam gateway` (apps/gateway, the gateway branch) is in the tree.
pytest.importorskip("seam.apps.gateway.runner")

from tests.cli.conftest import Cli, make_cli
from tests.support.fake_slack import RemoteFakeSlack
from tests.support.gateway_process import fake_process, stop, wait_for
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply

OWNER = "U0001"
DM = "D0001"


@pytest.fixture
def fake_slack() -> Iterator[RemoteFakeSlack]:
    with fake_process("tests.support.fake_slack") as url:
        yield RemoteFakeSlack(url)


def gateway_cli(tmp_path: Path, openai: OpenAIServer, fake: RemoteFakeSlack) -> Cli:
    cli = make_cli(
        tmp_path,
        {
            "OPENAI_BASE_URL": openai.base_url,
            "OPENAI_API_KEY": "test-key",
            "SLACK_BOT_TOKEN": "xoxb-e2e",
            "SLACK_APP_TOKEN": "xapp-e2e",
        },
    )
    cli.write_config(
        f'[gateway.slack]\nbase_url = "{fake.base_url}"\nallow = ["{OWNER}"]\n'
        '[sandbox]\nbackend = "local"\n'
    )
    return cli


def texts(fake: RemoteFakeSlack) -> list[str]:
    return [
        str(c["params"].get("text"))
        for c in fake.calls()
        if c["method"] in ("chat.postMessage", "chat.update")
    ]


def finals(fake: RemoteFakeSlack, answer: str) -> int:
    return sum(1 for t in texts(fake) if t == answer)


def test_a_dm_is_answered_after_a_read_file_round_trip(
    tmp_path: Path, openai_server: OpenAIServer, fake_slack: RemoteFakeSlack
) -> None:
    cli = gateway_cli(tmp_path, openai_server, fake_slack)
    (cli.project / "note.txt").write_text("the code is 7431\n", encoding="utf-8")
    openai_server.push(
        tool_call_reply([("read_file", json.dumps({"path": "note.txt"}))]),
        text_reply("It says the code is *7431*."),
    )
    gateway = cli.popen("gateway")
    try:
        fake_slack.push_message(
            "What does note.txt say?", channel=DM, channel_type="im", user=OWNER
        )
        wait_for(lambda: finals(fake_slack, "It says the code is _7431_.") == 1, "answer", gateway)
    finally:
        err = stop(gateway)
    assert "slack" in err
    tool = [m for m in openai_server.chat_requests[1].body["messages"] if m["role"] == "tool"]
    assert "7431" in str(tool[0]["content"])
    (envelope,) = fake_slack.envelopes()
    assert envelope["acked"]


def test_sigkill_after_receipt_then_restart_answers_once(
    tmp_path: Path, openai_server: OpenAIServer, fake_slack: RemoteFakeSlack
) -> None:
    cli = gateway_cli(tmp_path, openai_server, fake_slack)
    openai_server.push(text_reply("never finished").stalled(), text_reply("Answered once."))
    gateway = cli.popen("gateway")
    try:
        fake_slack.push_message("hello?", channel=DM, channel_type="im", user=OWNER)
        wait_for(lambda: len(openai_server.chat_requests) == 1, "the model call", gateway)
        wait_for(lambda: fake_slack.envelopes()[0]["acked"], "the ack", gateway)
    finally:
        gateway.send_signal(signal.SIGKILL)
        gateway.communicate(timeout=10)
    openai_server.release()
    restarted = cli.popen("gateway")
    try:
        wait_for(lambda: finals(fake_slack, "Answered once.") == 1, "the answer", restarted)
    finally:
        stop(restarted)
    assert finals(fake_slack, "Answered once.") == 1
    assert "never finished" not in texts(fake_slack)


def test_a_message_sent_while_the_gateway_was_down_is_answered(
    tmp_path: Path, openai_server: OpenAIServer, fake_slack: RemoteFakeSlack
) -> None:
    cli = gateway_cli(tmp_path, openai_server, fake_slack)
    openai_server.push(text_reply("Here now."))
    # Slack keeps the envelope until an app connects and acknowledges it.
    fake_slack.push_message("anyone?", channel=DM, channel_type="im", user=OWNER)
    gateway = cli.popen("gateway")
    try:
        wait_for(lambda: finals(fake_slack, "Here now.") == 1, "the answer", gateway)
    finally:
        stop(gateway)
    assert fake_slack.envelopes()[0]["acked"]


def test_a_strangers_button_is_refused_and_the_owners_press_answers(
    tmp_path: Path, openai_server: OpenAIServer, fake_slack: RemoteFakeSlack
) -> None:
    cli = gateway_cli(tmp_path, openai_server, fake_slack)
    openai_server.push(
        tool_call_reply([("terminal", json.dumps({"command": "touch made.txt"}))]),
        text_reply("Made it."),
    )
    gateway = cli.popen("gateway")
    try:
        fake_slack.push_message("make a file", channel=DM, channel_type="im", user=OWNER)

        def asking() -> dict[str, Any] | None:
            for c in fake_slack.calls():
                if c["method"] in ("chat.postMessage", "chat.update") and any(
                    b["type"] == "actions" for b in c["params"].get("blocks") or []
                ):
                    return c
            return None

        wait_for(lambda: asking() is not None, "the approval buttons", gateway)
        call = asking()
        assert call is not None
        buttons = [
            e for b in call["params"]["blocks"] if b["type"] == "actions" for e in b["elements"]
        ]
        labels = [e["text"]["text"] for e in buttons]
        assert labels == ["Once", "This session", "Always", "Deny", "Never"]
        once = buttons[0]["value"]
        ts = call["params"].get("ts") or call["result"]["ts"]
        fake_slack.push_button(once, ts, channel=DM, user="U0666")
        wait_for(lambda: bool(_calls(fake_slack, "chat.postEphemeral")), "the refusal", gateway)
        refusal = _calls(fake_slack, "chat.postEphemeral")[0]["params"]
        assert refusal["user"] == "U0666" and refusal["text"] == "not yours"
        assert not (cli.project / "made.txt").exists()
        fake_slack.push_button(once, ts, channel=DM, user=OWNER)
        wait_for(lambda: finals(fake_slack, "Made it.") == 1, "the answer", gateway)
    finally:
        stop(gateway)
    assert (cli.project / "made.txt").exists()


def _calls(fake: RemoteFakeSlack, method: str) -> list[dict[str, Any]]:
    return [c for c in fake.calls() if c["method"] == method]


def test_slash_commands_work_in_slack(
    tmp_path: Path, openai_server: OpenAIServer, fake_slack: RemoteFakeSlack
) -> None:
    cli = gateway_cli(tmp_path, openai_server, fake_slack)
    gateway = cli.popen("gateway")
    try:
        fake_slack.push_command("/help", channel=DM, user=OWNER)
        wait_for(lambda: any("/usage" in t for t in texts(fake_slack)), "the help", gateway)
    finally:
        stop(gateway)
    assert not openai_server.chat_requests  # answered by the gateway, not the model


def test_sigkill_before_delivery_then_restart_delivers_once(
    tmp_path: Path, openai_server: OpenAIServer, fake_slack: RemoteFakeSlack
) -> None:
    cli = gateway_cli(tmp_path, openai_server, fake_slack)
    openai_server.push(text_reply("Delivered once."))
    # Slack refuses the next three posts: the preview and the answer's first attempt fail
    # before the kill, one more after the restart.
    fake_slack.fail("chat.postMessage", "internal_error", times=3)
    gateway = cli.popen("gateway")
    try:
        fake_slack.push_message("hi", channel=DM, channel_type="im", user=OWNER)
        wait_for(lambda: len(fake_slack.calls("chat.postMessage")) >= 2, "failed posts", gateway)
    finally:
        gateway.send_signal(signal.SIGKILL)
        gateway.communicate(timeout=10)
    restarted = cli.popen("gateway")
    try:
        wait_for(lambda: len(_posted(fake_slack)) >= 1, "delivery", restarted)
    finally:
        stop(restarted)
    assert _posted(fake_slack) == ["Delivered once."]
    assert len(openai_server.chat_requests) == 1  # answered once, delivered after


def _posted(fake: RemoteFakeSlack) -> list[str]:
    """The texts of the posts Slack accepted."""
    return [str(c["params"]["text"]) for c in fake.calls("chat.postMessage") if c["result"]["ok"]]
