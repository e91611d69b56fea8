"""The Logs and Channels sections in a real browser (Chromium, Playwright) against a real
`seam serve` subprocess: a chat message's log line appears live in Logs; a pairing request
made as a gateway makes it is approved in Channels, and `seam pairing list` shows it."""

from __future__ import annotations

import os
import subprocess
import time
from typing import Any

from seam.apps.gateway.pairing import PairingStore
from seam.apps.gateway.status import status_path, write_status
from seam.wiring.settings import Settings
from tests.support.openai_server import OpenAIServer, error_reply, text_reply
from tests.web.page_support import *  # noqa: F403  (the fixtures: `browser`, `pages`, …)
from tests.web.page_support import (
    SEAM,
    Pages,
    Served,
    answers,
    keep_shot,
    screenshots_on_failure,
    send,
    settled,
)


def visit(page: Any, label: str) -> None:
    nav = page.get_by_role("navigation", name="Sections")
    nav.get_by_role("link", name=label).click()
    page.get_by_role("heading", name=label, level=1).wait_for()


def cli(served: Served, *args: str) -> str:
    env = {**os.environ, "SEAM_HOME": str(served.home), "HOME": str(served.home.parent)}
    done = subprocess.run([str(SEAM), *args], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


@screenshots_on_failure
def test_a_pairing_request_is_approved_in_channels(pages: Pages, served: Served) -> None:
    settings = Settings(home=served.home, working_dir=served.project)
    store = PairingStore.for_settings(settings)
    ann = store.request("telegram", "4242", "Ann Example", "4242")
    store.request("discord", "77", "Bob", "900")
    paired = store.request("slack", "U01", "Carol", "C9")
    store.approve(paired.code, by="test")
    now = time.time()
    write_status(
        status_path(settings),
        {
            "telegram": {"state": "running", "last_received_at": now - 12, "pid": 1234},
            "slack": {"state": "backoff", "last_error": "invalid_auth", "pid": 1234},
        },
    )
    page = pages.open()
    visit(page, "Channels")
    page.get_by_role("cell", name="telegram", exact=True).first.wait_for()
    page.get_by_role("cell", name="slack:U01", exact=True).wait_for()
    page.get_by_role("cell", name="invalid_auth").wait_for()
    page.get_by_role("button", name=f"Approve {ann.code} (Ann Example)").click()
    page.locator(".control-status", has_text="Approved telegram:4242.").wait_for()
    page.get_by_role("cell", name="telegram:4242", exact=True).wait_for()
    assert "paired\ttelegram:4242\tAnn Example" in cli(served, "pairing", "list")
    assert f"waiting\t{ann.code}" not in cli(served, "pairing", "list")
    keep_shot(page, "control-channels")
    page.get_by_role("button", name="Revoke telegram:4242 (Ann Example)").click()
    page.locator(".control-status", has_text="Revoked telegram:4242.").wait_for()
    assert "telegram:4242" not in cli(served, "pairing", "list")


@screenshots_on_failure
def test_logs_show_a_chat_messages_line_live(pages: Pages, model: OpenAIServer) -> None:
    logs = pages.open()
    visit(logs, "Logs")
    logs.get_by_label("Surface").select_option("web")
    logs.locator(".log-lines[data-live=true]").wait_for()
    # The model is busy once (a retry the web surface logs), then answers.
    model.push(error_reply(503, headers={"Retry-After": "0"}), text_reply("Ahoy there."))
    chat = pages.open()
    send(chat, "hello logs")
    answers(chat).filter(has_text="Ahoy there.").wait_for()
    settled(chat)
    line = logs.locator(".log-line", has_text="retry 1 of")
    line.wait_for()
    assert line.locator(".log-surface").inner_text() == "web"
    assert line.locator(".log-level").inner_text() == "INFO"
    logs.get_by_role("button", name="Pause").click()
    logs.get_by_role("button", name="Resume").wait_for()
    keep_shot(logs, "control-logs")
