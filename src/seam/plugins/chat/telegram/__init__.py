"""Telegram as a chat platform: `TELEGRAM` (its `ChatPlatform`), `TelegramSection` (the
`[gateway.telegram]` table) and `build_telegram`, which makes the adapter from that section.

It reads nothing itself: the wiring hands in the `[gateway.telegram]` section (any object
with the attributes, or a mapping with the keys, `token_env` and `base_url`; optionally
`poll_timeout`), the environment to take the token from, and the clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from seam.contracts.chat import ChatPlatform
from seam.plugins.chat.common import setting
from seam.plugins.chat.section import AllowList, ChatSection

if TYPE_CHECKING:
    from seam.plugins.chat.telegram.adapter import TelegramAdapter

DEFAULT_TOKEN_ENV = "TELEGRAM_BOT_TOKEN"


class TelegramSection(ChatSection):
    token_env: str = "TELEGRAM_BOT_TOKEN"
    # A self-hosted Bot API server ("" = api.telegram.org).
    base_url: str = ""
    # User ids that may talk to the agent without pairing (numbers or text).
    allow: AllowList


def build_telegram(
    section: object, env: Mapping[str, str], clock: Callable[[], float] = time.time
) -> TelegramAdapter:
    """The Telegram adapter for a `[gateway.telegram]` section; raises ValueError when the
    token's environment variable is unset, naming the variable (never the token)."""
    from seam.plugins.chat.telegram.adapter import TelegramAdapter

    token_env = str(setting(section, "token_env", None) or DEFAULT_TOKEN_ENV)
    token = env.get(token_env, "").strip()
    if not token:
        raise ValueError(f"Telegram: the bot token variable {token_env} is not set")
    options: dict[str, Any] = {}
    poll_timeout = setting(section, "poll_timeout", None)
    if poll_timeout:
        options["poll_timeout"] = float(poll_timeout)
    base_url = str(setting(section, "base_url", "") or "")
    return TelegramAdapter(token, base_url=base_url, clock=clock, **options)


TELEGRAM = ChatPlatform(
    name="telegram",
    id_prefix="tg",
    section=TelegramSection,
    build=build_telegram,
    token_fields=("token_env",),
)
