"""discord.py's `Client` for the Discord adapter: the gateway's events forwarded to the
adapter (its `GatewayOwner` side), progress and drops recorded in its `HealthBook`."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import discord

from seam.contracts.chat import Inbound
from seam.plugins.chat.health import HealthBook

_log = logging.getLogger("seam.gateway.discord")
Deliver = Callable[[Inbound], Awaitable[None]]


class GatewayOwner(Protocol):
    """What the client hands its events to (the adapter)."""

    async def on_connected(self, client: discord.Client, deliver: Deliver) -> None: ...

    async def on_message(
        self, client: discord.Client, message: discord.Message, deliver: Deliver
    ) -> None: ...

    async def on_interaction(self, interaction: discord.Interaction, deliver: Deliver) -> None: ...


class GatewayClient(discord.Client):
    """discord.py's events, forwarded to the adapter."""

    def __init__(
        self,
        owner: GatewayOwner,
        book: HealthBook,
        deliver: Deliver,
        *,
        guild_ready_timeout: float,
        identify_delay: float,
    ) -> None:
        intents = discord.Intents.default()
        intents.message_content = True
        super().__init__(
            intents=intents,
            guild_ready_timeout=guild_ready_timeout,
            allowed_mentions=discord.AllowedMentions.none(),
        )
        self._owner = owner
        self._book = book
        self._deliver = deliver
        self._identify_delay = identify_delay

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        # Discord allows one IDENTIFY per 5 s; discord.py waits that long before each
        # identify but the first. Tests against a fake set a shorter wait.
        if not initial:
            await asyncio.sleep(self._identify_delay)

    async def on_ready(self) -> None:
        await self._owner.on_connected(self, self._deliver)

    async def on_resumed(self) -> None:
        await self._owner.on_connected(self, self._deliver)

    async def on_disconnect(self) -> None:
        if not self.is_closed():
            self._book.set_state("reconnecting", "the gateway connection dropped")

    async def on_socket_event_type(self, event_type: str) -> None:
        self._book.progress()

    async def on_message(self, message: discord.Message) -> None:
        await self._owner.on_message(self, message, self._deliver)

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        await self._owner.on_interaction(interaction, self._deliver)

    async def on_error(self, event_method: str, /, *args: Any, **kwargs: Any) -> None:
        _log.exception("discord: handling %s failed", event_method)


async def quietly_close(client: discord.Client) -> None:
    try:
        await client.close()
    except Exception as exc:  # closing a broken connection may fail; it is gone either way
        _log.debug("discord: closing the client: %s", exc)
