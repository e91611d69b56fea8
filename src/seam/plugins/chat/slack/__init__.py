"""Slack over Socket Mode (slack-bolt): `SLACK` (its `ChatPlatform`), `SlackSection` (the
`[gateway.slack]` table) and `build_slack`, which makes the adapter from that section and
the token values wiring hands in."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from seam.contracts.chat import ChatAdapter, ChatPlatform
from seam.plugins.chat.common import setting
from seam.plugins.chat.section import AllowList, ChatSection


class SlackSection(ChatSection):
    bot_token_env: str = "SLACK_BOT_TOKEN"
    app_token_env: str = "SLACK_APP_TOKEN"  # Socket Mode
    base_url: str = ""  # the Web API's base URL ("" = slack.com/api/)
    # User ids that may talk to the agent without pairing (numbers or text).
    allow: AllowList


def build_slack(section: Any, env: Mapping[str, str], clock: Callable[[], float]) -> ChatAdapter:
    """`section`: the `[gateway.slack]` table (a mapping or a settings object) with
    `bot_token_env`, `app_token_env` and `base_url` (the Web API, for tests); `env`: the
    environment wiring read, so the tokens are looked up here and nothing else is read."""
    from seam.plugins.chat.slack.adapter import SlackAdapter

    bot_env = str(setting(section, "bot_token_env", "SLACK_BOT_TOKEN"))
    app_env = str(setting(section, "app_token_env", "SLACK_APP_TOKEN"))
    bot_token, app_token = env.get(bot_env), env.get(app_env)
    if not bot_token or not app_token:
        missing = [
            name for name, value in ((bot_env, bot_token), (app_env, app_token)) if not value
        ]
        raise ValueError(f"[gateway.slack] needs {' and '.join(missing)} set in the environment")
    return SlackAdapter(
        bot_token=bot_token,
        app_token=app_token,
        base_url=str(setting(section, "base_url", "") or "") or None,
        clock=clock,
    )


SLACK = ChatPlatform(
    name="slack",
    id_prefix="sl",
    section=SlackSection,
    build=build_slack,
    token_fields=("bot_token_env", "app_token_env"),
)
