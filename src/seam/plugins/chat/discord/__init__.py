"""Discord (discord.py): `DISCORD` (its `ChatPlatform`), `DiscordSection` (the
`[gateway.discord]` table) and `build_discord`, which makes the adapter from that section
and the token value wiring hands in."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from seam.contracts.chat import ChatAdapter, ChatPlatform
from seam.plugins.chat.common import setting
from seam.plugins.chat.section import AllowList, ChatSection


class DiscordSection(ChatSection):
    token_env: str = "DISCORD_BOT_TOKEN"
    # User ids that may talk to the agent without pairing (numbers or text).
    allow: AllowList
    # A REST base and gateway URL of another server (tests, self-hosting); "" = Discord's.
    base_url: str = ""
    gateway_url: str = ""


def build_discord(section: Any, env: Mapping[str, str], clock: Callable[[], float]) -> ChatAdapter:
    """`section`: the `[gateway.discord]` table (a mapping or a settings object) with
    `token_env` and, for tests or a self-hosted gateway, `base_url` (REST, ending in
    `/api/v10`) and `gateway_url` (the websocket); `env`: the environment wiring read."""
    from seam.plugins.chat.discord.adapter import DiscordAdapter

    token_env = str(setting(section, "token_env", "DISCORD_BOT_TOKEN"))
    token = env.get(token_env)
    if not token:
        raise ValueError(f"[gateway.discord] needs {token_env} set in the environment")
    return DiscordAdapter(
        token=token,
        base_url=str(setting(section, "base_url", "") or "") or None,
        gateway_url=str(setting(section, "gateway_url", "") or "") or None,
        clock=clock,
    )


DISCORD = ChatPlatform(
    name="discord",
    id_prefix="dc",
    section=DiscordSection,
    build=build_discord,
    token_fields=("token_env",),
)
