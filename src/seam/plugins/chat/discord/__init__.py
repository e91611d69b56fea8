"""Discord (discord.py): `build_discord` makes the adapter from the `[gateway.discord]`
section and the token value wiring hands in."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from seam.contracts.chat import ChatAdapter


def build_discord(section: Any, env: Mapping[str, str], clock: Callable[[], float]) -> ChatAdapter:
    """`section`: the `[gateway.discord]` table (a mapping or a settings object) with
    `token_env` and, for tests or a self-hosted gateway, `base_url` (REST, ending in
    `/api/v10`) and `gateway_url` (the websocket); `env`: the environment wiring read."""
    from seam.plugins.chat.discord.adapter import DiscordAdapter

    token_env = str(_get(section, "token_env", "DISCORD_BOT_TOKEN"))
    token = env.get(token_env)
    if not token:
        raise ValueError(f"[gateway.discord] needs {token_env} set in the environment")
    return DiscordAdapter(
        token=token,
        base_url=str(_get(section, "base_url", "") or "") or None,
        gateway_url=str(_get(section, "gateway_url", "") or "") or None,
        clock=clock,
    )


def _get(section: Any, key: str, default: object) -> object:
    if isinstance(section, Mapping):
        return section.get(key, default)
    return getattr(section, key, default)
