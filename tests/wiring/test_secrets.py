"""Which values the process redacts as its own secrets, from the settings and environment."""

from __future__ import annotations

import io
import logging
from pathlib import Path

from seam.plugins.safety.redact import RedactingFilter, redact
from seam.wiring.secrets import (
    configured_secrets,
    is_secret_name,
    redactor_for_env,
    secret_redactor,
)
from seam.wiring.settings import Settings, load_settings

KEY = "Q7rT2yU8iO3pA9sD4fG6hJ1kL5zX0cVb"
POOL = ["Pool1aaaaBBBBccccDDDD", "Pool2eeeeFFFFggggHHHH"]


def _settings(tmp_path: Path, env: dict[str, str], config: str = "") -> Settings:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(config)
    return load_settings(env, home=home, working_dir=tmp_path)


def test_the_keys_the_settings_name_are_secrets_under_those_names(tmp_path: Path) -> None:
    env = {
        "LITELLM_MASTER": KEY,  # no secret-sounding name: only the config names it
        "OPENAI_API_KEYS": ",".join(POOL),
        "ANTHROPIC_API_KEY": "sk-ant-value-0123456789",
        "PATH": "/usr/bin:/bin",
    }
    settings = _settings(tmp_path, env, '[model]\napi_key_env = "LITELLM_MASTER"\n')
    found = {s.value: s.name for s in configured_secrets(settings)}
    assert found[KEY] == "LITELLM_MASTER"
    assert found[POOL[0]] == found[POOL[1]] == "OPENAI_API_KEYS"  # each pool key on its own
    assert found["sk-ant-value-0123456789"] == "ANTHROPIC_API_KEY"
    assert "/usr/bin:/bin" not in found


def test_tokens_of_future_platforms_are_secrets_when_set(tmp_path: Path) -> None:
    env = {
        "TELEGRAM_BOT_TOKEN": "123456789:AAHk3vQ_exampleTokenValue",
        "SLACK_BOT_TOKEN": "xoxb-1-2-abcdefghij",
        "SLACK_APP_TOKEN": "xapp-1-A0-123-abcdef",
        "DISCORD_BOT_TOKEN": "MTAxMjM0NTY3ODkw.GhIjKl.MnOpQrStUv",
        "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "DB_PASSWORD": "correct horse battery",
        "SEAM_STORE_URL": "postgresql://seam:pg-Secret-99@db.internal/seam",
    }
    found = {s.value: s.name for s in configured_secrets(_settings(tmp_path, env))}
    for name, value in env.items():
        if name != "SEAM_STORE_URL":
            assert found[value] == name
    assert found["pg-Secret-99"] == "SEAM_STORE_URL"  # the password, not the whole URL


def test_settings_and_names_that_are_no_secret_are_left_out(tmp_path: Path) -> None:
    env = {
        "SEAM_HOME": str(tmp_path / "home"),
        "SEAM_MODEL": "gpt-4o-mini-2024",
        "OPENAI_BASE_URL": "http://127.0.0.1:8080/v1",
        "MAX_TOKENS": "4096",
        "TOKENIZERS_PARALLELISM": "false",
        "SSH_AUTH_SOCK": "/tmp/ssh-XXXX/agent.1",
        "KEYBOARD_LAYOUT": "us-international",
        "GITHUB_TOKEN": "short",  # too short to tell from a word
        "SECRET_BACKEND": "keyring",  # a plain word
        "GPG_KEY_PATH": "/home/me/.gnupg/key.asc",
    }
    assert configured_secrets(_settings(tmp_path, env)) == []
    assert not is_secret_name("PWD") and not is_secret_name("KEY")
    assert is_secret_name("hf_token") and is_secret_name("STRIPE_KEY")


def test_the_runtime_redactor_knows_the_configured_key_and_the_patterns(tmp_path: Path) -> None:
    settings = _settings(tmp_path, {"OPENAI_API_KEY": KEY})
    redactor = secret_redactor(settings)
    github = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    assert redactor(f"{KEY} {github}") == "[REDACTED:OPENAI_API_KEY] [REDACTED:github]"
    assert secret_redactor(None) is redact  # an instrumented runtime reads no environment
    assert secret_redactor(_settings(tmp_path, {})) is redact


def test_the_log_filter_redacts_the_environment_s_own_secrets(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('[model]\napi_key_env = "GATEWAY"\n')
    env = {"SEAM_HOME": str(home), "GATEWAY": KEY, "HOME": str(tmp_path)}
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter(redactor_for_env(env)))
    logger = logging.getLogger("test_wiring_secrets")
    logger.propagate = False
    logger.addHandler(handler)
    try:
        logger.warning("provider said: bad key %s", KEY)
    finally:
        logger.removeHandler(handler)
    assert stream.getvalue() == "provider said: bad key [REDACTED:GATEWAY]\n"


def test_a_broken_config_still_leaves_the_environment_s_secrets_redacted(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text("not [valid toml")
    redactor = redactor_for_env({"SEAM_HOME": str(home), "HF_TOKEN": KEY})
    assert redactor(f"token {KEY}") == "token [REDACTED:HF_TOKEN]"
