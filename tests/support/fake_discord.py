"""A fake Discord on 127.0.0.1: the REST API (`/api/v10/...`) and the gateway websocket
(`/gw`), in the wire formats discord.py 2.7 speaks, for the Discord adapter's tests and
`seam gateway` subprocess tests.

REST replies carry `Content-Type: application/json` exactly (discord.py parses JSON only
then; aiohttp's `json_response` would add `; charset=utf-8`). Every call is recorded in
`calls`. The gateway sends HELLO, answers IDENTIFY with READY and heartbeats with ACKs;
a RESUME is refused with INVALID_SESSION (so the client identifies again and gets a fresh
READY), unless `resumable` is set, when it answers RESUMED. Messages a test posts
(`push_message`) are kept in their channel's history (`GET /channels/{id}/messages`,
`after`/`before`/`limit` as Discord pages them) and dispatched as MESSAGE_CREATE to every
identified socket; `go_down()` closes the sockets and parks new ones without a HELLO until
`come_up()`, so what is posted meanwhile is only in the history, as when a bot was offline.
Tests wait on `until(predicate)`, woken on every change of the fake's state.

`python -m tests.support.fake_discord` runs one standalone and prints its port.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

BOT_ID = "1100000000000000001"
APP_ID = "1100000000000000002"
OWNER_ID = "1100000000000000003"
GATEWAY_PATH = "/gw"
_JSON = "application/json"


@dataclass
class Call:
    method: str
    path: str
    query: dict[str, str]
    body: Any
    headers: dict[str, str]


@dataclass
class FakeDiscord:
    port: int = 0
    resumable: bool = False
    # Milliseconds; tests use a short one, so the client's heartbeats wake `until` often.
    heartbeat_interval: int = 41250
    heartbeats: int = 0
    calls: list[Call] = field(default_factory=list)
    history: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    identifies: list[dict[str, Any]] = field(default_factory=list)
    resumes: int = 0
    connections: int = 0
    down: bool = False
    _sockets: dict[web.WebSocketResponse, int] = field(default_factory=dict)  # -> sequence
    _parked: list[asyncio.Future[None]] = field(default_factory=list)
    _runner: web.AppRunner | None = None
    _changed: asyncio.Condition | None = None
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}{GATEWAY_PATH}"

    async def start(self) -> FakeDiscord:
        self._changed = asyncio.Condition()
        app = web.Application()
        app.router.add_get(GATEWAY_PATH, self._gateway)
        app.router.add_route("*", "/api/v10/{path:.*}", self._rest)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def stop(self) -> None:
        self.come_up_nowait()
        for ws in list(self._sockets):
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    # -- what tests drive

    def snowflake(self) -> str:
        return str(1200000000000000000 + next(self._ids))

    def user(
        self, user_id: str = OWNER_ID, name: str = "alice", bot: bool = False
    ) -> dict[str, Any]:
        return {
            "id": user_id,
            "username": name,
            "discriminator": "0",
            "global_name": name.title(),
            "avatar": None,
            "bot": bot,
        }

    async def push_message(
        self,
        content: str,
        *,
        channel_id: str = "1300000000000000001",
        guild_id: str | None = None,
        author: dict[str, Any] | None = None,
        mentions: list[dict[str, Any]] | None = None,
        reply_to: dict[str, Any] | None = None,
        attachments: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """A message someone posts: in the history at once, dispatched if the bot is up."""
        message = self._message(
            channel_id, content, author or self.user(), guild_id=guild_id, mentions=mentions
        )
        if reply_to is not None:
            message["type"] = 19
            message["message_reference"] = {
                "message_id": reply_to["id"],
                "channel_id": channel_id,
                **({"guild_id": guild_id} if guild_id else {}),
            }
            message["referenced_message"] = reply_to
        if attachments:
            message["attachments"] = attachments
        await self._dispatch("MESSAGE_CREATE", message)
        return message

    async def push_button(
        self,
        *,
        custom_id: str,
        message: dict[str, Any],
        user: dict[str, Any] | None = None,
        guild_id: str | None = None,
    ) -> dict[str, Any]:
        """A press of a button on `message` (INTERACTION_CREATE, type 3)."""
        presser = user or self.user()
        interaction: dict[str, Any] = {
            "id": self.snowflake(),
            "application_id": APP_ID,
            "type": 3,
            "data": {"custom_id": custom_id, "component_type": 2},
            "channel_id": message["channel_id"],
            "channel": self._channel(message["channel_id"], guild_id, presser),
            "token": f"interaction-token-{next(self._ids)}",
            "version": 1,
            "message": message,
            "app_permissions": "0",
            "locale": "en-US",
            "entitlements": [],
            "authorizing_integration_owners": {},
            "attachment_size_limit": 10485760,
        }
        if guild_id:
            interaction["guild_id"] = guild_id
            interaction["member"] = {
                "user": presser,
                "roles": [],
                "joined_at": _NOW,
                "flags": 0,
                "deaf": False,
                "mute": False,
                "permissions": "0",
            }
        else:
            interaction["user"] = presser
        await self._dispatch("INTERACTION_CREATE", interaction)
        return interaction

    def _channel(
        self, channel_id: str, guild_id: str | None, user: dict[str, Any]
    ) -> dict[str, Any]:
        """The partial channel an interaction carries."""
        if guild_id is None:
            return {
                "id": channel_id,
                "type": 1,
                "recipients": [user],
                "last_message_id": None,
                "flags": 0,
            }
        return {
            "id": channel_id,
            "type": 0,
            "guild_id": guild_id,
            "name": "general",
            "position": 0,
            "permission_overwrites": [],
            "nsfw": False,
            "parent_id": None,
            "topic": None,
            "last_message_id": None,
            "rate_limit_per_user": 0,
            "flags": 0,
            "permissions": "0",
        }

    async def go_down(self) -> None:
        """The bot's connection is gone and cannot come back until `come_up()`."""
        self.down = True
        for ws in list(self._sockets):
            await ws.close(code=4000)
        await self._notify()

    def come_up_nowait(self) -> None:
        self.down = False
        for parked in self._parked:
            if not parked.done():
                parked.set_result(None)
        self._parked.clear()

    async def come_up(self) -> None:
        self.come_up_nowait()
        await self._notify()

    async def drop(self) -> None:
        for ws in list(self._sockets):
            await ws.close(code=4000)

    def calls_to(self, method: str, path_suffix: str) -> list[Call]:
        return [c for c in self.calls if c.method == method and c.path.endswith(path_suffix)]

    def posted(self, channel_id: str) -> list[Call]:
        return self.calls_to("POST", f"/channels/{channel_id}/messages")

    async def until(self, predicate: Callable[[], bool], timeout: float = 10.0) -> None:
        assert self._changed is not None
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(predicate), timeout)

    @property
    def identified(self) -> int:
        return len(self._sockets)

    # -- the server

    async def _notify(self) -> None:
        assert self._changed is not None
        async with self._changed:
            self._changed.notify_all()

    def _message(
        self,
        channel_id: str,
        content: str,
        author: dict[str, Any],
        *,
        guild_id: str | None = None,
        mentions: list[dict[str, Any]] | None = None,
        components: list[Any] | None = None,
    ) -> dict[str, Any]:
        message: dict[str, Any] = {
            "id": self.snowflake(),
            "channel_id": channel_id,
            "author": author,
            "content": content,
            "timestamp": _NOW,
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": mentions or [],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "pinned": False,
            "type": 0,
            "components": components or [],
        }
        if guild_id:
            message["guild_id"] = guild_id
        self.history.setdefault(channel_id, []).append(message)
        return message

    async def _dispatch(self, event: str, data: dict[str, Any]) -> None:
        for ws, seq in list(self._sockets.items()):
            self._sockets[ws] = seq + 1
            await ws.send_str(json.dumps({"op": 0, "t": event, "s": seq + 1, "d": data}))
        await self._notify()

    async def _rest(self, request: web.Request) -> web.Response:
        path = "/" + request.match_info["path"]
        body: Any = None
        if request.can_read_body:
            raw = await request.read()
            body = json.loads(raw) if raw and request.content_type == _JSON else raw
        self.calls.append(
            Call(request.method, path, dict(request.query), body, dict(request.headers))
        )
        await self._notify()
        parts = path.strip("/").split("/")
        if path == "/users/@me":
            return _json(self.user(BOT_ID, "seam", bot=True))
        if path == "/oauth2/applications/@me":
            return _json(
                {
                    "id": APP_ID,
                    "name": "seam",
                    "icon": None,
                    "description": "",
                    "bot_public": True,
                    "bot_require_code_grant": False,
                    "verify_key": "0" * 64,
                    "flags": 0,
                    "owner": self.user(),
                }
            )
        if path == "/gateway" or path == "/gateway/bot":
            return _json({"url": self.gateway_url, "shards": 1})
        if parts[0] == "channels" and len(parts) >= 3 and parts[2] == "typing":
            return web.Response(status=204)
        if parts[0] == "channels" and len(parts) == 3 and parts[2] == "messages":
            channel_id = parts[1]
            if request.method == "GET":
                return _json(self._page(channel_id, request.query))
            sent = self._message(
                channel_id,
                body.get("content", ""),
                self.user(BOT_ID, "seam", bot=True),
                components=body.get("components"),
            )
            await self._notify()
            return _json(sent)
        if parts[0] == "channels" and len(parts) == 4 and request.method == "PATCH":
            for message in self.history.get(parts[1], []):
                if message["id"] == parts[3]:
                    message.update(
                        {k: v for k, v in body.items() if k in ("content", "components")}
                    )
                    message["edited_timestamp"] = _NOW
                    return _json(message)
            return _json({"message": "Unknown Message", "code": 10008}, status=404)
        if parts[0] == "interactions":
            return web.Response(status=204)
        if parts[0] == "webhooks":
            return _json(
                self._message(
                    "0", (body or {}).get("content", ""), self.user(BOT_ID, "seam", bot=True)
                )
            )
        return _json({"message": "404: Not Found", "code": 0}, status=404)

    def _page(self, channel_id: str, query: Any) -> list[dict[str, Any]]:
        messages = sorted(self.history.get(channel_id, []), key=lambda m: int(m["id"]))
        limit = int(query.get("limit", 50))
        if "after" in query:
            window = [m for m in messages if int(m["id"]) > int(query["after"])][:limit]
        else:
            if "before" in query:
                messages = [m for m in messages if int(m["id"]) < int(query["before"])]
            window = messages[-limit:]
        return list(reversed(window))  # Discord pages newest first

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self.connections += 1
        await self._notify()
        if self.down:
            parked: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._parked.append(parked)
            await parked
        await ws.send_str(
            json.dumps({"op": 10, "d": {"heartbeat_interval": self.heartbeat_interval}})
        )
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                frame = json.loads(msg.data)
                op = frame.get("op")
                if op == 1:
                    self.heartbeats += 1
                    await ws.send_str(json.dumps({"op": 11}))
                elif op == 2:
                    self.identifies.append(frame["d"])
                    self._sockets[ws] = 1
                    await ws.send_str(
                        json.dumps({"op": 0, "t": "READY", "s": 1, "d": self._ready()})
                    )
                elif op == 6:
                    self.resumes += 1
                    if self.resumable:
                        self._sockets[ws] = 1
                        await ws.send_str(json.dumps({"op": 0, "t": "RESUMED", "s": 1, "d": {}}))
                    else:
                        await ws.send_str(json.dumps({"op": 9, "d": False}))
                await self._notify()
        finally:
            self._sockets.pop(ws, None)
            await self._notify()
        return ws

    def _ready(self) -> dict[str, Any]:
        return {
            "v": 10,
            "user": self.user(BOT_ID, "seam", bot=True),
            "guilds": [],
            "session_id": f"session-{next(self._ids)}",
            "resume_gateway_url": self.gateway_url,
            "application": {"id": APP_ID, "flags": 0},
        }


_NOW = "2026-12-01T12:00:00.000000+00:00"


def _json(payload: Any, status: int = 200) -> web.Response:
    return web.Response(
        body=json.dumps(payload).encode(), status=status, headers={"Content-Type": _JSON}
    )


async def _main() -> None:
    fake = await FakeDiscord().start()
    print(fake.port, flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    try:
        asyncio.run(_main())
    except KeyboardInterrupt:
        sys.exit(0)
