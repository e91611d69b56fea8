"""Slack over Socket Mode (slack-bolt): `build_slack` makes the adapter from the
`[gateway.slack]` section and the token values wiring hands in."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from seam.contracts.chat import ChatAdapter


def build_slack(section: Any, env: Mapping[str, str], clock: Callable[[], float]) -> ChatAdapter:
    """`section`: the `[gateway.slack]` table (a mapping or a settings object) with
    `bot_token_env`, `app_token_env` and `base_url` (the Web API, for tests); `env`: the
    environment wiring read, so the tokens are looked up here and nothing else is read."""
    from seam.plugins.chat.slack.adapter import SlackAdapter

    bot_env = str(_get(section, "bot_token_env", "SLACK_BOT_TOKEN"))
    app_env = str(_get(section, "app_token_env", "SLACK_APP_TOKEN"))
    bot_token, app_token = env.get(bot_env), env.get(app_env)
    if not bot_token or not app_token:
        missing = [
            name for name, value in ((bot_env, bot_token), (app_env, app_token)) if not value
        ]
        raise ValueError(f"[gateway.slack] needs {' and '.join(missing)} set in the environment")
    return SlackAdapter(
        bot_token=bot_token,
        app_token=app_token,
        base_url=str(_get(section, "base_url", "") or "") or None,
        clock=clock,
    )


def _get(section: Any, key: str, default: object) -> object:
    if isinstance(section, Mapping):
        return section.get(key, default)
    return getattr(section, key, default)
