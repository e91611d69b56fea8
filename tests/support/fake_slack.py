"""A fake Slack on 127.0.0.1: the Web API and a Socket Mode websocket, in the real wire
formats, for the Slack adapter's tests and `seam gateway` subprocess tests.

Web API: `POST /api/<method>` with a JSON or form body and `Authorization: Bearer`; every
call is recorded in `calls` and answered `{"ok": true, ...}` (`fail(method, error)` makes
the next call of a method answer `{"ok": false, "error": ...}`). `apps.connections.open`
hands out `ws://127.0.0.1:<port>/link/`; there the fake sends `{"type": "hello"}`, then
every envelope not yet acknowledged, and records the client's acks. As Slack does, an
envelope that was not acked is sent again, with `retry_attempt` counted up, on the next
connection: `drop()` closes the socket to make one. Tests wait on `until(predicate)`,
which wakes on every change of the fake's state, never on a timer.

`python -m tests.support.fake_slack` runs one standalone and prints its port; another
process drives it over HTTP: `POST /_fake/message` (`{"text", "channel", "user",
"channel_type", "thread_ts"}`), `/_fake/event` (an event), `/_fake/button` (`{"value",
"message_ts", "channel", "user"}`), `/_fake/command` (`{"command", "text", "channel",
"user"}`), `/_fake/drop`, `/_fake/fail` (`{"method", "error",
"times"}`), `/_fake/wait` (`{"method", "count", "timeout"}`: blocks until that many calls
of a Web API method); `GET /_fake/calls` and `/_fake/envelopes` report what happened.
`RemoteFakeSlack` wraps those controls for a test.
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

BOT_USER_ID = "UBOT"
BOT_ID = "BBOT"
TEAM_ID = "T0001"
APP_ID = "A0001"


@dataclass
class Call:
    method: str
    params: dict[str, Any]
    headers: dict[str, str]
    result: dict[str, Any] = field(default_factory=dict)  # what the fake answered


@dataclass
class Envelope:
    envelope_id: str
    type: str  # "events_api" | "interactive" | "slash_commands"
    payload: dict[str, Any]
    sent: int = 0  # how many times it went out
    ack: dict[str, Any] | None = None

    def wire(self) -> dict[str, Any]:
        return {
            "envelope_id": self.envelope_id,
            "type": self.type,
            "payload": self.payload,
            "accepts_response_payload": self.type in ("interactive", "slash_commands"),
            "retry_attempt": max(self.sent - 1, 0),
            "retry_reason": "timeout" if self.sent > 1 else "",
        }


@dataclass
class FakeSlack:
    port: int = 0
    calls: list[Call] = field(default_factory=list)
    envelopes: list[Envelope] = field(default_factory=list)
    connections: int = 0  # websockets opened so far
    files: dict[str, bytes] = field(default_factory=dict)
    file_requests: list[dict[str, str]] = field(default_factory=list)  # their headers
    _failures: dict[str, list[str]] = field(default_factory=dict)
    # Open sockets, oldest first; as Slack does, an envelope goes to one of them (here:
    # the newest that is still open).
    _sockets: list[web.WebSocketResponse] = field(default_factory=list)
    _runner: web.AppRunner | None = None
    _changed: asyncio.Condition | None = None
    _ts: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/"

    async def start(self) -> FakeSlack:
        self._changed = asyncio.Condition()
        app = web.Application()
        app.router.add_post("/api/{method}", self._api)
        app.router.add_get("/api/{method}", self._api)  # users.info and other reads
        app.router.add_get("/link/", self._socket)
        app.router.add_get("/files/{name}", self._file)
        app.router.add_post("/_fake/{action}", self._control)
        app.router.add_get("/_fake/calls", self._report_calls)
        app.router.add_get("/_fake/envelopes", self._report_envelopes)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def stop(self) -> None:
        for ws in list(self._sockets):
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    # -- what tests drive

    def next_ts(self) -> str:
        return f"1700000000.{next(self._ts):06d}"

    async def push_event(self, event: dict[str, Any]) -> Envelope:
        """An Events API envelope (`message`, `app_mention`, ...) sent to the app now, or
        on its next connection."""
        event = {"event_ts": event.get("ts", self.next_ts()), **event}
        payload = {
            "token": "verification-token",
            "team_id": TEAM_ID,
            "api_app_id": APP_ID,
            "event": event,
            "type": "event_callback",
            "event_id": f"Ev{next(self._ids):08d}",
            "event_time": 1700000000,
            "authorizations": [
                {"enterprise_id": None, "team_id": TEAM_ID, "user_id": BOT_USER_ID, "is_bot": True}
            ],
        }
        return await self._push("events_api", payload)

    async def push_message(
        self,
        text: str,
        *,
        channel: str = "C0001",
        user: str = "U0001",
        channel_type: str = "channel",
        thread_ts: str | None = None,
        **extra: Any,
    ) -> Envelope:
        event: dict[str, Any] = {
            "type": "message",
            "channel": channel,
            "user": user,
            "text": text,
            "ts": self.next_ts(),
            "channel_type": channel_type,
            **extra,
        }
        if thread_ts is not None:
            event["thread_ts"] = thread_ts
        return await self.push_event(event)

    async def push_button(
        self, *, value: str, message_ts: str, channel: str = "C0001", user: str = "U0001"
    ) -> Envelope:
        payload = {
            "type": "block_actions",
            "user": {"id": user, "username": "alice", "name": "alice", "team_id": TEAM_ID},
            "api_app_id": APP_ID,
            "token": "verification-token",
            "container": {
                "type": "message",
                "message_ts": message_ts,
                "channel_id": channel,
                "is_ephemeral": False,
            },
            "trigger_id": f"1337.{next(self._ids)}",
            "team": {"id": TEAM_ID, "domain": "seam"},
            "channel": {"id": channel, "name": "general"},
            "message": {"type": "message", "ts": message_ts, "user": BOT_USER_ID, "text": ""},
            "response_url": f"http://127.0.0.1:{self.port}/response",
            "actions": [
                {
                    "action_id": "seam:0:0",
                    "block_id": "seam-actions-0",
                    "type": "button",
                    "value": value,
                    "text": {"type": "plain_text", "text": value},
                    "action_ts": "1700000000.1",
                }
            ],
        }
        return await self._push("interactive", payload)

    def add_file(self, name: str, content: bytes) -> str:
        """Content served as a file's `url_private_download` (needs the bot token)."""
        self.files[name] = content
        return f"http://127.0.0.1:{self.port}/files/{name}"

    async def _file(self, request: web.Request) -> web.Response:
        self.file_requests.append(dict(request.headers))
        content = self.files.get(request.match_info["name"])
        if content is None or not request.headers.get("Authorization", "").startswith(
            "Bearer xoxb-"
        ):
            return web.Response(status=404)
        return web.Response(body=content, content_type="application/octet-stream")

    async def push_command(
        self, command: str, text: str = "", *, channel: str = "D0001", user: str = "U0001"
    ) -> Envelope:
        """A slash command someone typed (`/new`, `/stop`, ...)."""
        payload = {
            "token": "verification-token",
            "team_id": TEAM_ID,
            "team_domain": "seam",
            "channel_id": channel,
            "channel_name": "directmessage" if channel.startswith("D") else "general",
            "user_id": user,
            "user_name": "alice",
            "command": command,
            "text": text,
            "api_app_id": APP_ID,
            "is_enterprise_install": "false",
            "response_url": f"http://127.0.0.1:{self.port}/response",
            "trigger_id": f"1337.{next(self._ids)}.cmd",
        }
        return await self._push("slash_commands", payload)

    def fail(self, method: str, error: str = "internal_error", times: int = 1) -> None:
        self._failures.setdefault(method, []).extend([error] * times)

    async def refresh(self) -> None:
        """Slack's periodic `{"type": "disconnect", "reason": "refresh_requested"}`: the
        client is to open a new connection (and this one closes soon after)."""
        message = {
            "type": "disconnect",
            "reason": "refresh_requested",
            "debug_info": {"host": "fake"},
        }
        for ws in list(self._sockets):
            await ws.send_str(json.dumps(message))

    async def drop(self) -> None:
        """Close every open socket (the client sees the connection end)."""
        for ws in list(self._sockets):
            await ws.close()

    def calls_of(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    async def until(self, predicate: Callable[[], bool], timeout: float = 10.0) -> None:
        assert self._changed is not None
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(predicate), timeout)

    # -- the server

    async def _notify(self) -> None:
        assert self._changed is not None
        async with self._changed:
            self._changed.notify_all()

    async def _push(self, kind: str, payload: dict[str, Any]) -> Envelope:
        envelope = Envelope(envelope_id=f"env-{next(self._ids)}", type=kind, payload=payload)
        self.envelopes.append(envelope)
        live = [ws for ws in self._sockets if not ws.closed]
        if live:
            await self._send(live[-1], envelope)
        await self._notify()
        return envelope

    async def _send(self, ws: web.WebSocketResponse, envelope: Envelope) -> None:
        envelope.sent += 1
        await ws.send_str(json.dumps(envelope.wire()))

    async def _control(self, request: web.Request) -> web.Response:
        action = request.match_info["action"]
        body = await request.json() if request.can_read_body else {}
        if action == "message":
            text = body.pop("text")
            envelope = await self.push_message(text, **body)
        elif action == "event":
            envelope = await self.push_event(body)
        elif action == "button":
            envelope = await self.push_button(**body)
        elif action == "command":
            envelope = await self.push_command(**body)
        elif action == "drop":
            await self.drop()
            return web.json_response({"ok": True})
        elif action == "wait":
            count = int(body.get("count", 1))
            await self.until(
                lambda: len(self.calls_of(body["method"])) >= count, float(body.get("timeout", 30))
            )
            return web.json_response([_call_report(c) for c in self.calls_of(body["method"])])
        elif action == "fail":
            self.fail(body["method"], body.get("error", "internal_error"), body.get("times", 1))
            return web.json_response({"ok": True})
        else:
            return web.json_response({"ok": False, "error": "unknown_action"}, status=404)
        return web.json_response({"ok": True, **self._envelope_report(envelope)})

    async def _report_calls(self, request: web.Request) -> web.Response:
        return web.json_response([_call_report(c) for c in self.calls])

    async def _report_envelopes(self, request: web.Request) -> web.Response:
        return web.json_response([self._envelope_report(e) for e in self.envelopes])

    def _envelope_report(self, envelope: Envelope) -> dict[str, Any]:
        event = envelope.payload.get("event") or {}
        return {
            "envelope_id": envelope.envelope_id,
            "ts": event.get("ts"),
            "sent": envelope.sent,
            "acked": envelope.ack is not None,
        }

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        if request.method == "GET":
            params: dict[str, Any] = dict(request.query)
        elif request.content_type == "application/json":
            params = await request.json()
        else:
            params = dict(await request.post())
        call = Call(method, dict(params), dict(request.headers))
        self.calls.append(call)
        failures = self._failures.get(method)
        if failures:
            call.result = {"ok": False, "error": failures.pop(0)}
        else:
            call.result = {"ok": True, **self._result(method, params)}
        await self._notify()
        return web.json_response(call.result)

    def _result(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "auth.test":
            return {
                "url": "https://seam.slack.com/",
                "team": "Seam",
                "user": "seam",
                "team_id": TEAM_ID,
                "user_id": BOT_USER_ID,
                "bot_id": BOT_ID,
                "is_enterprise_install": False,
            }
        if method == "apps.connections.open":
            return {"url": f"ws://127.0.0.1:{self.port}/link/?ticket={next(self._ids)}"}
        if method == "chat.postMessage":
            ts = self.next_ts()
            message = {
                "type": "message",
                "text": params.get("text", ""),
                "user": BOT_USER_ID,
                "ts": ts,
            }
            return {"channel": params.get("channel"), "ts": ts, "message": message}
        if method == "chat.update":
            return {
                "channel": params.get("channel"),
                "ts": params.get("ts"),
                "text": params.get("text"),
            }
        if method == "users.info":
            user_id = str(params.get("user"))
            name = {"U0001": "alice", "U0002": "bob"}.get(user_id, user_id.lower())
            return {
                "user": {
                    "id": user_id,
                    "name": name,
                    "real_name": name.title(),
                    "profile": {"display_name": name.title(), "real_name": name.title()},
                }
            }
        if method == "chat.postEphemeral":
            return {"message_ts": self.next_ts()}
        return {}

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self.connections += 1
        self._sockets.append(ws)
        hello = {
            "type": "hello",
            "num_connections": 1,
            "debug_info": {"host": "fake", "approximate_connection_time": 18060},
            "connection_info": {"app_id": APP_ID},
        }
        await ws.send_str(json.dumps(hello))
        for envelope in self.envelopes:
            if envelope.ack is None:
                await self._send(ws, envelope)
        await self._notify()
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                data = json.loads(msg.data)
                for envelope in self.envelopes:
                    if envelope.envelope_id == data.get("envelope_id") and envelope.ack is None:
                        envelope.ack = data
                await self._notify()
        finally:
            if ws in self._sockets:
                self._sockets.remove(ws)
            await self._notify()
        return ws


def _call_report(call: Call) -> dict[str, Any]:
    return {"method": call.method, "params": call.params, "result": call.result}


class RemoteFakeSlack:
    """Drives a fake running in another process through its `/_fake/...` controls
    (blocking calls: use them from a test's thread, not inside an event loop)."""

    def __init__(self, base: str) -> None:
        self.base = base.rstrip("/")
        self.base_url = f"{self.base}/api/"

    def _post(self, action: str, body: dict[str, Any] | None = None, timeout: float = 30) -> Any:
        request = urllib.request.Request(
            f"{self.base}/_fake/{action}",
            data=json.dumps(body or {}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read())

    def push_message(self, text: str, **kwargs: Any) -> dict[str, Any]:
        return dict(self._post("message", {"text": text, **kwargs}))

    def push_button(self, value: str, message_ts: str, **kwargs: Any) -> dict[str, Any]:
        return dict(self._post("button", {"value": value, "message_ts": message_ts, **kwargs}))

    def push_command(self, command: str, text: str = "", **kwargs: Any) -> dict[str, Any]:
        return dict(self._post("command", {"command": command, "text": text, **kwargs}))

    def drop(self) -> None:
        self._post("drop")

    def fail(self, method: str, error: str = "internal_error", times: int = 1) -> None:
        self._post("fail", {"method": method, "error": error, "times": times})

    def wait_for(
        self, method: str, *, count: int = 1, timeout: float = 30.0
    ) -> list[dict[str, Any]]:
        """Blocks until the fake has seen `count` calls of `method` (raises on timeout)."""
        body = {"method": method, "count": count, "timeout": timeout}
        return list(self._post("wait", body, timeout + 5))

    def calls(self, method: str | None = None) -> list[dict[str, Any]]:
        """Every Web API call so far (`method`, `params`, the fake's `result`)."""
        with urllib.request.urlopen(f"{self.base}/_fake/calls", timeout=30) as response:
            calls = list(json.loads(response.read()))
        return [c for c in calls if method is None or c["method"] == method]

    def envelopes(self) -> list[dict[str, Any]]:
        with urllib.request.urlopen(f"{self.base}/_fake/envelopes", timeout=30) as response:
            return list(json.loads(response.read()))


async def _serve(port: int) -> None:
    fake = await FakeSlack(port=port).start()
    print(fake.port, flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description="A fake Slack (Web API + Socket Mode) on 127.0.0.1."
    )
    parser.add_argument("--port", type=int, default=0)
    try:
        asyncio.run(_serve(parser.parse_args().port))
    except KeyboardInterrupt:
        sys.exit(0)
