"""`[gateway]` as the issue spells it, its errors, and what `seam doctor` says of it."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from seam.apps.doctor.gateway import gateway_checks
from seam.apps.gateway.sender import parse_target
from seam.wiring.gateway import adapter_specs, advisory_key
from seam.wiring.gateway_settings import gateway_section
from seam.wiring.settings import ConfigError, load_settings

CONFIG = """
[gateway]
owner = "telegram:123456789"
[gateway.telegram]
token_env = "TELEGRAM_BOT_TOKEN"
base_url = "http://127.0.0.1:9/bot"
allow = ["123456789", 555]
[gateway.slack]
bot_token_env = "SLACK_BOT_TOKEN"
app_token_env = "SLACK_APP_TOKEN"
base_url = ""
allow = []
[gateway.discord]
token_env = "DISCORD_BOT_TOKEN"
allow = []
"""


def settings_for(tmp_path: Path, text: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(text, encoding="utf-8")
    return load_settings(env or {}, home=home, working_dir=tmp_path)


def test_the_public_keys_parse_with_their_defaults(tmp_path: Path) -> None:
    section = gateway_section(settings_for(tmp_path, CONFIG))
    assert list(section.platforms()) == ["telegram", "slack", "discord"]
    assert section.alert_after_seconds == 600
    assert section.telegram is not None and section.telegram.allow == ["123456789", "555"]
    assert section.allowed("telegram") == {"123456789", "555"}
    assert section.allowed("slack") == frozenset()


def test_a_misspelt_key_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\[gateway\] telegram.tokn_env"):
        gateway_section(settings_for(tmp_path, '[gateway.telegram]\ntokn_env = "X"\n'))
    with pytest.raises(ConfigError, match="alert_after"):
        gateway_section(settings_for(tmp_path, '[gateway]\nalert_after = "soon"\n'))


def test_a_missing_token_is_one_line_before_anything_starts(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, '[gateway.telegram]\nallow = ["1"]\n')
    with pytest.raises(ConfigError, match="TELEGRAM_BOT_TOKEN is not set"):
        adapter_specs(settings)
    ok = settings_for(tmp_path, "[gateway.telegram]\n", {"TELEGRAM_BOT_TOKEN": "1:x"})
    assert [spec.name for spec in adapter_specs(ok, registry={"telegram": object})] == [  # type: ignore[dict-item]
        "telegram"
    ]


def test_doctor_shows_each_adapters_state_and_last_receipt(tmp_path: Path) -> None:
    env = {"TELEGRAM_BOT_TOKEN": "1:x"}
    settings = settings_for(tmp_path, "[gateway.telegram]\n[gateway.discord]\n", env)
    now = time.time()
    status = {
        "adapters": {
            "telegram": {
                "state": "connected",
                "last_received_at": now - 3,
                "updated_at": now,
                "pid": 7,
            }
        }
    }
    (settings.home / "gateway-status.json").write_text(json.dumps(status))
    checks = {c.name: c for c in gateway_checks(settings, clock=lambda: now)}
    assert checks["gateway telegram"].ok
    assert "connected, last received 3 s ago" in checks["gateway telegram"].detail
    assert not checks["gateway discord"].ok
    assert "DISCORD_BOT_TOKEN not set" in checks["gateway discord"].detail


def test_targets_and_lock_keys() -> None:
    assert str(parse_target("telegram:-100:17")) == "telegram:-100:17"
    assert parse_target("slack:C1").thread_id is None
    assert advisory_key("telegram") == advisory_key("telegram") != advisory_key("slack")
    assert -(2**63) <= advisory_key("telegram") < 2**63
