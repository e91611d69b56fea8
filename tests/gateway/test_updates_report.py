"""What `seam gateway status` and `seam doctor` say of the updates that did not go
through: dead after their retries, or stuck waiting for one (no gateway runs their
platform). Over a real SQLite store whose clock puts the rows in the past."""

from __future__ import annotations

import time
from pathlib import Path

from seam.apps.doctor.gateway import updates_check
from seam.apps.gateway.inbox import Inbox
from seam.apps.gateway.report import update_lines
from seam.contracts.chat import ChatRef, InboundMessage
from seam.services.sessions.sqlite import SQLiteSessionStore
from seam.wiring.settings import Settings, load_settings


def settings_with_gateway(tmp_path: Path) -> Settings:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('[gateway.telegram]\nallow = ["42"]\n', encoding="utf-8")
    env = {"HOME": str(tmp_path), "TELEGRAM_BOT_TOKEN": "t"}
    return load_settings(env, home=home, working_dir=tmp_path)


def message(chat: str, message_id: str) -> InboundMessage:
    return InboundMessage(ChatRef("telegram", chat), message_id, chat, "ann", "hi")


async def test_dead_and_stuck_updates_are_counted_and_listed(tmp_path: Path) -> None:
    settings = settings_with_gateway(tmp_path)
    assert await updates_check(settings) is not None  # no store yet: nothing to see
    hour_ago = time.time() - 3600
    store = SQLiteSessionStore(str(settings.store_path), clock=lambda: hour_ago)
    parked = Inbox(store, clock=lambda: hour_ago)
    await parked.park("tg:42:1", message("42", "1"), tried=1, error="boom")
    await parked.park("tg:43:2", message("43", "2"), tried=1, error="bang")
    await store.mark_failed("tg:42:1:inbound", "boom", retry_at=None)
    await store.aclose()

    check = await updates_check(settings)
    assert check is not None and not check.ok
    assert check.detail == "1 dead, 1 stuck"
    assert "seam gateway clear" in check.hint

    store = SQLiteSessionStore(str(settings.store_path))
    lines = await update_lines(store)
    assert lines[0] == "updates: 1 dead, 1 stuck, 0 waiting for a retry"
    assert lines[1].startswith("dead\ttelegram:42\ttg:42:1\t") and lines[1].endswith("\tboom")
    assert lines[2].startswith("stuck\ttelegram:43\ttg:43:2\t") and lines[2].endswith("\tbang")
    assert await Inbox(store).clear() == 1
    await store.aclose()


async def test_no_gateway_configured_means_no_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    settings = load_settings({"HOME": str(tmp_path)}, home=home, working_dir=tmp_path)
    assert await updates_check(settings) is None
