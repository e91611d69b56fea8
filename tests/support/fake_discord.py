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

`python -m tests.support.fake_discord` runs one standalone and prints its port; another
process drives it over HTTP: `POST /_fake/message` (`{"content", "channel_id",
"guild_id", "author_id", "mention_bot"}`), `/_fake/button` (`{"custom_id", "message_id",
"channel_id", "user_id"}`), `/_fake/down`, `/_fake/up`, `/_fake/drop`, `/_fake/fail`
(`{"method", "path", "status", "times"}`), `/_fake/wait` (`{"method", "path", "count",
"timeout"}`: blocks until that many REST calls whose path
ends so; `{"identified": n}`: until the n-th IDENTIFY holds a live socket); `GET
/_fake/calls` and `/_fake/history/{channel_id}` report what happened.
`RemoteFakeDiscord` wraps those controls for a test.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
import urllib.request
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
    # Guilds the bot is in, sent as GUILD_CREATE after READY (see `add_guild`).
    guilds: list[dict[str, Any]] = field(default_factory=list)
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
    files: dict[str, bytes] = field(default_factory=dict)
    _failures: dict[tuple[str, str], list[int]] = field(default_factory=dict)
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
        app.router.add_get("/attachments/{name}", self._file)
        app.router.add_post("/_fake/{action}", self._control)
        app.router.add_get("/_fake/calls", self._report_calls)
        app.router.add_get("/_fake/history/{channel_id}", self._report_history)
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

    def fail(self, method: str, path_suffix: str, status: int = 503, times: int = 1) -> None:
        """The next `times` REST calls of `method` whose path ends with `path_suffix`
        answer `status` (503: discord.py gives up at once, where 500 is retried)."""
        self._failures.setdefault((method, path_suffix), []).extend([status] * times)

    def add_file(self, name: str, content: bytes) -> str:
        """Content served as an attachment; returns its URL (Discord's CDN, here)."""
        self.files[name] = content
        return f"http://127.0.0.1:{self.port}/attachments/{name}"

    async def _file(self, request: web.Request) -> web.Response:
        content = self.files.get(request.match_info["name"])
        if content is None:
            return web.Response(status=404)
        return web.Response(body=content, content_type="application/octet-stream")

    def add_guild(
        self,
        guild_id: str,
        *,
        channels: dict[str, str] | None = None,
        threads: dict[str, str] | None = None,
    ) -> None:
        """A guild with text `channels` (id -> name) and `threads` (id -> parent id), sent
        to the bot on its next IDENTIFY."""
        bot = self.user(BOT_ID, "seam", bot=True)
        self.guilds.append(
            {
                "id": guild_id,
                "name": "Seam guild",
                "icon": None,
                "owner_id": OWNER_ID,
                "member_count": 2,
                "roles": [
                    {
                        "id": guild_id,
                        "name": "@everyone",
                        "permissions": "0",
                        "position": 0,
                        "color": 0,
                        "hoist": False,
                        "managed": False,
                        "mentionable": False,
                        "flags": 0,
                    }
                ],
                "emojis": [],
                "stickers": [],
                "features": [],
                "members": [
                    {
                        "user": bot,
                        "roles": [],
                        "joined_at": _NOW,
                        "deaf": False,
                        "mute": False,
                        "flags": 0,
                    }
                ],
                "channels": [
                    {**self._channel(cid, guild_id, bot), "name": name}
                    for cid, name in (channels or {}).items()
                ],
                "threads": [
                    {
                        "id": tid,
                        "guild_id": guild_id,
                        "parent_id": parent,
                        "owner_id": OWNER_ID,
                        "name": "a thread",
                        "type": 11,
                        "last_message_id": None,
                        "message_count": 0,
                        "member_count": 1,
                        "rate_limit_per_user": 0,
                        "flags": 0,
                        "thread_metadata": {
                            "archived": False,
                            "auto_archive_duration": 1440,
                            "archive_timestamp": _NOW,
                            "locked": False,
                        },
                    }
                    for tid, parent in (threads or {}).items()
                ],
                "voice_states": [],
                "presences": [],
                "stage_instances": [],
                "guild_scheduled_events": [],
                "soundboard_sounds": [],
                "unavailable": False,
            }
        )

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

    async def _control(self, request: web.Request) -> web.Response:
        action = request.match_info["action"]
        body = await request.json() if request.can_read_body else {}
        if action == "message":
            author = self.user(body.get("author_id", OWNER_ID), body.get("author_name", "alice"))
            bot = self.user(BOT_ID, "seam", bot=True)
            content = body["content"]
            if body.get("mention_bot"):
                content = f"<@{BOT_ID}> {content}"
            message = await self.push_message(
                content,
                channel_id=body.get("channel_id", "1300000000000000001"),
                guild_id=body.get("guild_id"),
                author=author,
                mentions=[bot] if body.get("mention_bot") else None,
            )
            return _json(message)
        if action == "button":
            channel = self.history.get(body.get("channel_id", ""), [])
            message = next((m for m in channel if m["id"] == body["message_id"]), None)
            if message is None:
                return _json({"message": "Unknown Message", "code": 10008}, status=404)
            presser = self.user(body.get("user_id", OWNER_ID))
            interaction = await self.push_button(
                custom_id=body["custom_id"],
                message=message,
                user=presser,
                guild_id=body.get("guild_id"),
            )
            return _json(interaction)
        if action == "wait" and "identified" in body:
            wanted = int(body["identified"])
            await self.until(
                lambda: len(self.identifies) >= wanted and self.identified > 0,
                float(body.get("timeout", 30)),
            )
            return _json({"identifies": len(self.identifies), "connections": self.connections})
        if action == "wait":
            method, suffix, count = body["method"], body["path"], int(body.get("count", 1))
            await self.until(
                lambda: len(self.calls_to(method, suffix)) >= count, float(body.get("timeout", 30))
            )
            return _json([_call_report(c) for c in self.calls_to(method, suffix)])
        if action == "fail":
            self.fail(
                body["method"],
                body["path"],
                int(body.get("status", 503)),
                int(body.get("times", 1)),
            )
            return _json({"ok": True})
        if action in ("down", "up", "drop"):
            await {"down": self.go_down, "up": self.come_up, "drop": self.drop}[action]()
            return _json({"ok": True})
        return _json({"message": "unknown action", "code": 0}, status=404)

    async def _report_calls(self, request: web.Request) -> web.Response:
        return _json([_call_report(c) for c in self.calls])

    async def _report_history(self, request: web.Request) -> web.Response:
        return _json(self.history.get(request.match_info["channel_id"], []))

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
        for (method, suffix), statuses in self._failures.items():
            if statuses and request.method == method and path.endswith(suffix):
                status = statuses.pop(0)
                return _json({"message": "Service Unavailable", "code": 0}, status=status)
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
        if parts[0] == "channels" and len(parts) == 2 and request.method == "GET":
            messages = self.history.get(parts[1])
            if not messages:
                return _json({"message": "Unknown Channel", "code": 10003}, status=404)
            guild_id = messages[0].get("guild_id")
            return _json(self._channel(parts[1], guild_id, messages[0]["author"]))
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
                    self._sockets[ws] = 1 + len(self.guilds)
                    ready = {"op": 0, "t": "READY", "s": 1, "d": self._ready()}
                    await ws.send_str(json.dumps(ready))
                    for n, guild in enumerate(self.guilds, start=2):
                        create = {"op": 0, "t": "GUILD_CREATE", "s": n, "d": guild}
                        await ws.send_str(json.dumps(create))
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
            "guilds": [{"id": g["id"], "unavailable": True} for g in self.guilds],
            "session_id": f"session-{next(self._ids)}",
            "resume_gateway_url": self.gateway_url,
            "application": {"id": APP_ID, "flags": 0},
        }


_NOW = "2026-12-01T12:00:00.000000+00:00"


def _json(payload: Any, status: int = 200) -> web.Response:
    return web.Response(
        body=json.dumps(payload).encode(), status=status, headers={"Content-Type": _JSON}
    )


def _call_report(call: Call) -> dict[str, Any]:
    body = call.body.decode(errors="replace") if isinstance(call.body, bytes) else call.body
    return {"method": call.method, "path": call.path, "query": call.query, "body": body}


class RemoteFakeDiscord:
    """Drives a fake running in another process through its `/_fake/...` controls
    (blocking calls: use them from a test's thread, not inside an event loop)."""

    def __init__(self, base: str) -> None:
        self.base = base.rstrip("/")
        self.api_base = f"{self.base}/api/v10"
        self.gateway_url = self.base.replace("http://", "ws://") + GATEWAY_PATH

    def _post(self, action: str, body: dict[str, Any] | None = None, timeout: float = 30) -> Any:
        request = urllib.request.Request(
            f"{self.base}/_fake/{action}",
            data=json.dumps(body or {}).encode(),
            headers={"Content-Type": _JSON},
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read())

    def push_message(self, content: str, **kwargs: Any) -> dict[str, Any]:
        return dict(self._post("message", {"content": content, **kwargs}))

    def push_button(
        self, custom_id: str, message_id: str, channel_id: str, **kwargs: Any
    ) -> dict[str, Any]:
        body = {
            "custom_id": custom_id,
            "message_id": message_id,
            "channel_id": channel_id,
            **kwargs,
        }
        return dict(self._post("button", body))

    def fail(self, method: str, path: str, status: int = 503, times: int = 1) -> None:
        self._post("fail", {"method": method, "path": path, "status": status, "times": times})

    def go_down(self) -> None:
        self._post("down")

    def come_up(self) -> None:
        self._post("up")

    def drop(self) -> None:
        self._post("drop")

    def wait_for(
        self, method: str, path: str, *, count: int = 1, timeout: float = 30.0
    ) -> list[dict[str, Any]]:
        """Blocks until the fake has seen `count` `method` calls whose path ends with `path`."""
        body = {"method": method, "path": path, "count": count, "timeout": timeout}
        return list(self._post("wait", body, timeout + 5))

    def calls(self) -> list[dict[str, Any]]:
        """Every REST call so far (`method`, `path`, `query`, `body`)."""
        with urllib.request.urlopen(f"{self.base}/_fake/calls", timeout=30) as response:
            return list(json.loads(response.read()))

    def wait_identified(self, count: int = 1, timeout: float = 30.0) -> None:
        """Blocks until the client has identified `count` times and is on the gateway."""
        self._post("wait", {"identified": count, "timeout": timeout}, timeout + 5)

    def history(self, channel_id: str) -> list[dict[str, Any]]:
        with urllib.request.urlopen(f"{self.base}/_fake/history/{channel_id}", timeout=30) as r:
            return list(json.loads(r.read()))


async def _serve(port: int) -> None:
    fake = await FakeDiscord(port=port).start()
    print(fake.port, flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="A fake Discord (REST + gateway) on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0)
    try:
        asyncio.run(_serve(parser.parse_args().port))
    except KeyboardInterrupt:
        sys.exit(0)
