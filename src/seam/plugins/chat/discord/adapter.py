"""The Discord ChatAdapter: a discord.py 2.7 `Client` for the gateway, its HTTP client
(`client.http`, with discord.py's rate-limit handling) for REST.

**Durable before anything else.** Discord has no acks and no redelivery: a message is
handed to `deliver` before the adapter does anything else with it. The channel history is
the redelivery: for each channel the adapter has heard from it remembers the last message
it delivered, and after every (re)connect (READY or RESUMED) it reads
`GET /channels/{id}/messages?after=<last seen>` and delivers what it missed while it was
down. A failed `deliver` leaves the channel behind at its last delivered message and the
history is read again from there (with back-off), so nothing after a failure is skipped;
the submission id derived from channel and message id makes repeats harmless. What the
adapter has heard from lives in memory; a restarted gateway names the chats it knows, and
the last message it admitted from each, with `catch_up_from` (else a channel is caught up
only once it speaks again).

**Buttons.** A press (INTERACTION_CREATE, component type 2) must be answered within three
seconds: `answer_press` answers with an ephemeral message (a refusal) or a silent
"deferred update"; a press not answered within `defer_after` (2 s) is deferred by the
adapter, and a later text goes out as an ephemeral follow-up. Button data longer than Discord's
100-character custom id is sent as a short id the adapter maps back (in memory).

**Test and self-hosting endpoints.** `base_url` (REST, e.g. `http://127.0.0.1:P/api/v10`)
and `gateway_url` (`ws://127.0.0.1:P/gw`) replace discord.py's `Route.BASE` and
`DiscordWebSocket.DEFAULT_GATEWAY`. Those are class attributes: the setting is process-wide.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import discord
import yarl
from discord.gateway import DiscordWebSocket
from discord.http import Route

from seam.contracts.chat import (
    AdapterHealth,
    AdapterState,
    ButtonPress,
    ChatLimits,
    ChatRef,
    Inbound,
    Keyboard,
)
from seam.plugins.chat.common import reconnect_forever, remember, wait_closed
from seam.plugins.chat.discord.client import GatewayClient, quietly_close
from seam.plugins.chat.discord.parse import (
    CUSTOM_ID_MAX,
    PLATFORM,
    ChannelInfo,
    channel_info,
    components,
    guild_id_of,
    inbound_message,
    is_answerable,
)
from seam.plugins.chat.health import HealthBook
from seam.plugins.chat.markdown_discord import DISCORD_MAX_TEXT, format_discord

_log = logging.getLogger("seam.gateway.discord")
# Seam never joins voice: discord.py's once-per-process "PyNaCl/davey is not installed,
# voice will NOT be supported" warnings would only puzzle someone reading the gateway log.
discord.VoiceClient.warn_nacl = False
discord.VoiceClient.warn_dave = False
Deliver = Callable[[Inbound], Awaitable[None]]
_REMEMBERED = 2048
_NO_PINGS: dict[str, list[str]] = {"parse": []}


@dataclass
class _Press:
    interaction_id: int
    token: str
    responded: bool = False


class DiscordAdapter:
    platform = PLATFORM
    limits = ChatLimits(max_text=DISCORD_MAX_TEXT, min_edit_interval=1.0, max_buttons_per_row=5)

    def __init__(
        self,
        *,
        token: str,
        base_url: str | None = None,
        gateway_url: str | None = None,
        clock: Callable[[], float] = time.time,
        check_interval: float = 1.0,
        backoff: tuple[float, float] = (1.0, 60.0),
        guild_ready_timeout: float = 2.0,
        identify_delay: float = 5.0,
        defer_after: float = 2.0,
    ) -> None:
        if base_url:
            Route.BASE = base_url.rstrip("/")
        if gateway_url:
            DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)
        self._token = token
        # How long a healthy gateway may go without progress: Discord's heartbeat interval
        # is ~41 s and each ACK counts. The gateway's watchdog rebuilds after 3x this.
        self.poll_timeout = 45.0
        self._clock = clock
        self._check_interval = check_interval
        self._backoff = backoff
        self._guild_ready_timeout = guild_ready_timeout
        self._identify_delay = identify_delay
        self._defer_after = defer_after
        self._book = HealthBook("discord", clock, _log)
        self._closed = asyncio.Event()
        self._logged_in = asyncio.Event()
        self._client: discord.Client | None = None
        self._channels: dict[str, ChannelInfo] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._delivered: OrderedDict[str, None] = OrderedDict()
        self._presses: OrderedDict[str, _Press] = OrderedDict()
        self._long_data: OrderedDict[str, str] = OrderedDict()
        self._ids = itertools.count(1)
        self._tasks: set[asyncio.Task[None]] = set()

    # -- inbound

    async def run(self, deliver: Deliver) -> None:
        watcher = asyncio.create_task(self._watch_heartbeats())
        try:
            await reconnect_forever(self._closed, self._backoff, lambda: self._connect(deliver))
        finally:
            watcher.cancel()
            for task in list(self._tasks):
                task.cancel()
            self._book.set_state("stopped")

    async def _connect(self, deliver: Deliver) -> bool:
        """One gateway connection, from login to its end; True if it ended cleanly."""
        client = GatewayClient(
            self,
            self._book,
            deliver,
            guild_ready_timeout=self._guild_ready_timeout,
            identify_delay=self._identify_delay,
        )
        self._client = client
        try:
            await client.login(self._token)
            self._logged_in.set()
            await client.connect(reconnect=True)
            return True
        except discord.LoginFailure as exc:
            self._book.set_state("down", f"Discord refused the token ({exc})")
        except discord.PrivilegedIntentsRequired:
            self._book.set_state(
                "down",
                "Discord refused the Message Content intent: enable it for the bot "
                "in the developer portal",
            )
        except discord.ConnectionClosed as exc:
            # 4004: authentication failed; 4013: invalid intents.
            state: AdapterState = "down" if exc.code in (4004, 4013) else "reconnecting"
            self._book.set_state(state, f"the gateway closed the connection ({exc.code}: {exc})")
        except (discord.DiscordException, aiohttp.ClientError, OSError, TimeoutError) as exc:
            self._book.set_state("reconnecting", f"{type(exc).__name__}: {exc}")
        except Exception as exc:  # anything else: still reconnect, never give up
            _log.exception("discord: the connection failed")
            self._book.set_state("reconnecting", f"{type(exc).__name__}: {exc}")
        finally:
            self._logged_in.clear()
            await quietly_close(client)
        return False

    def catch_up_from(self, chat: ChatRef, message_id: str, *, is_dm: bool | None = None) -> None:
        """Read `chat`'s history after `message_id` on the next (re)connect: how a restarted
        gateway, which knows the last message it took from each chat, gets what was posted
        while it was down (the adapter itself remembers nothing across processes). Whether
        the chat is a DM (every message in it is addressed) is asked of Discord unless
        `is_dm` says."""
        channel_id = chat.thread_id or chat.chat_id
        info = self._channels.get(channel_id)
        if info is None:
            parent = chat.chat_id if chat.thread_id else None
            info = ChannelInfo(channel_id, bool(is_dm), parent, known=is_dm is not None)
            self._channels[channel_id] = info
        info.last_seen = max(info.last_seen, int(message_id))
        self._delivered[message_id] = None

    async def on_connected(self, client: discord.Client, deliver: Deliver) -> None:
        self._book.set_state("connected")
        self._book.progress()
        for info in list(self._channels.values()):
            await self._catch_up(client, info, deliver)

    async def on_message(
        self, client: discord.Client, message: discord.Message, deliver: Deliver
    ) -> None:
        self._book.progress()
        if not is_answerable(message):
            return
        key = str(message.channel.id)
        info = self._channels.get(key)
        if info is None:
            info = channel_info(
                message.channel, message.guild.id if message.guild else guild_id_of(message)
            )
            info.last_seen = message.id - 1
            self._channels[key] = info
        async with self._lock(key):
            if info.behind:
                await self._catch_up_locked(client, info, deliver)
                return
            await self._deliver_in_order(client, info, message, deliver)

    async def _deliver_in_order(
        self, client: discord.Client, info: ChannelInfo, message: discord.Message, deliver: Deliver
    ) -> None:
        if str(message.id) in self._delivered:
            return
        bot_id = client.user.id if client.user else None
        event = inbound_message(message, info, bot_id=bot_id, received_at=self._clock())
        try:
            await deliver(event)
        except Exception:
            _log.exception(
                "discord: delivering message %s failed; reading the history again", message.id
            )
            info.behind = True
            self._retry_later(client, info, deliver)
            raise
        info.last_seen = max(info.last_seen, message.id)
        remember(self._delivered, str(message.id), None, _REMEMBERED)

    async def _catch_up(self, client: discord.Client, info: ChannelInfo, deliver: Deliver) -> None:
        async with self._lock(info.channel_id):
            await self._catch_up_locked(client, info, deliver)

    async def _catch_up_locked(
        self, client: discord.Client, info: ChannelInfo, deliver: Deliver
    ) -> None:
        """Deliver, oldest first, what the channel has after the last delivered message."""
        if not info.known:
            # A DM or a guild channel? It decides `addressed`; Discord says (GET /channels).
            try:
                fetched = await client.fetch_channel(int(info.channel_id))
            except discord.NotFound:
                self._channels.pop(info.channel_id, None)
                return
            except Exception as exc:
                _log.warning("discord: looking up channel %s: %s", info.channel_id, exc)
                return  # the next (re)connect asks again
            guild = getattr(fetched, "guild", None)
            resolved = channel_info(fetched, guild.id if guild is not None else None)
            info.is_dm, info.parent_id, info.guild_id = (
                resolved.is_dm,
                resolved.parent_id,
                resolved.guild_id,
            )
            info.chat, info.known = resolved.chat, True
        channel = client.get_channel(int(info.channel_id)) or client.get_partial_messageable(
            int(info.channel_id),
            guild_id=int(info.guild_id) if info.guild_id else None,
            type=discord.ChannelType.private if info.is_dm else None,
        )
        try:
            async for message in channel.history(  # type: ignore[union-attr]
                limit=None, after=discord.Object(id=info.last_seen), oldest_first=True
            ):
                if is_answerable(message):
                    await self._deliver_in_order(client, info, message, deliver)
                else:
                    info.last_seen = max(info.last_seen, message.id)
        except Exception as exc:
            if not info.behind:  # a read failed, not a delivery: try again later too
                info.behind = True
                self._retry_later(client, info, deliver)
            _log.warning("discord: catching up channel %s: %s", info.channel_id, exc)
            return
        info.behind = False

    def _retry_later(self, client: discord.Client, info: ChannelInfo, deliver: Deliver) -> None:
        async def retry() -> None:
            delay = self._backoff[0]
            while info.behind and not self._closed.is_set() and not client.is_closed():
                await wait_closed(self._closed, delay)
                await self._catch_up(client, info, deliver)
                delay = min(self._backoff[1], delay * 2)

        self._spawn(retry())

    async def on_interaction(self, interaction: discord.Interaction, deliver: Deliver) -> None:
        self._book.progress()
        data: dict[str, Any] = dict(interaction.data or {})
        if interaction.type != discord.InteractionType.component or data.get("component_type") != 2:
            return
        channel_id = str(interaction.channel_id)
        info = self._channels.get(channel_id)
        if info is None and interaction.channel is not None:
            info = channel_info(interaction.channel, interaction.guild_id)
        chat = info.chat if info is not None else ChatRef(PLATFORM, channel_id)
        custom_id = str(data.get("custom_id", ""))
        press = ButtonPress(
            chat=chat,
            message_id=str(interaction.message.id) if interaction.message else "",
            user_id=str(interaction.user.id),
            data=self._long_data.get(custom_id, custom_id),
            press_id=str(interaction.id),
        )
        remember(
            self._presses, press.press_id, _Press(interaction.id, interaction.token), _REMEMBERED
        )
        await deliver(press)
        self._spawn(self._defer_if_unanswered(press.press_id))

    async def _defer_if_unanswered(self, press_id: str) -> None:
        await asyncio.sleep(self._defer_after)
        pending = self._presses.get(press_id)
        if pending is not None and not pending.responded:
            pending.responded = True
            await self._callback(pending, {"type": 6})

    async def _watch_heartbeats(self) -> None:
        """Heartbeat ACKs are progress too (an idle bot gets no events): the client's
        latency changes with every ACK."""
        last: float | None = None
        while True:
            await asyncio.sleep(self._check_interval)
            client = self._client
            if client is None or client.ws is None:
                continue
            latency = client.latency
            if latency != last and latency != float("inf"):
                last = latency
                self._book.progress()

    # -- outbound

    async def send(self, chat: ChatRef, text: str, *, buttons: Keyboard = ()) -> str:
        channel_id = chat.thread_id or chat.chat_id
        payload: dict[str, Any] = {"content": text, "allowed_mentions": _NO_PINGS}
        if buttons:
            payload["components"] = components(buttons, self._custom_id)
        http = await self._http()
        route = Route("POST", "/channels/{channel_id}/messages", channel_id=channel_id)
        sent = await http.request(route, json=payload)
        return str(sent["id"])

    async def edit(
        self, chat: ChatRef, message_id: str, text: str, *, buttons: Keyboard = ()
    ) -> None:
        channel_id = chat.thread_id or chat.chat_id
        # Components are always sent: an edit without them would keep the old buttons.
        payload = {
            "content": text,
            "allowed_mentions": _NO_PINGS,
            "components": components(buttons, self._custom_id),
        }
        http = await self._http()
        route = Route(
            "PATCH",
            "/channels/{channel_id}/messages/{message_id}",
            channel_id=channel_id,
            message_id=message_id,
        )
        await http.request(route, json=payload)

    async def typing(self, chat: ChatRef) -> None:
        http = await self._http()
        await http.send_typing(chat.thread_id or chat.chat_id)

    async def answer_press(self, press: ButtonPress, text: str | None = None) -> None:
        pending = self._presses.get(press.press_id)
        if pending is None:
            return  # not one of this run's presses: Discord no longer takes an answer
        if not pending.responded:
            pending.responded = True
            body: dict[str, Any] = (
                {"type": 4, "data": {"content": text, "flags": 64, "allowed_mentions": _NO_PINGS}}
                if text
                else {"type": 6}
            )
            await self._callback(pending, body)
            return
        if text:
            http = await self._http()
            client = self._client
            app_id = client.application_id if client is not None else None
            route = Route(
                "POST",
                "/webhooks/{application_id}/{token}",
                application_id=app_id,
                token=pending.token,
            )
            await http.request(
                route, json={"content": text, "flags": 64, "allowed_mentions": _NO_PINGS}
            )

    async def _callback(self, pending: _Press, body: dict[str, Any]) -> None:
        http = await self._http()
        route = Route(
            "POST",
            "/interactions/{interaction_id}/{interaction_token}/callback",
            interaction_id=pending.interaction_id,
            interaction_token=pending.token,
        )
        await http.request(route, json=body)

    def format(self, markdown: str) -> list[str]:
        return format_discord(markdown, self.limits.max_text)

    def _custom_id(self, data: str) -> str:
        if len(data) <= CUSTOM_ID_MAX:
            return data
        short = f"seam#{next(self._ids)}"
        remember(self._long_data, short, data, _REMEMBERED)
        return short

    async def _http(self) -> discord.http.HTTPClient:
        """The logged-in client's HTTP; waits (a while) for a login in progress."""
        await asyncio.wait_for(self._logged_in.wait(), 30)
        assert self._client is not None
        return self._client.http

    # -- state

    def health(self) -> AdapterHealth:
        return self._book.current

    async def close(self) -> None:
        self._closed.set()
        client = self._client
        if client is not None:
            await quietly_close(client)

    def _lock(self, channel_id: str) -> asyncio.Lock:
        return self._locks.setdefault(channel_id, asyncio.Lock())

    def _spawn(self, coro: Awaitable[None]) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
