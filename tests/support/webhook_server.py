"""A webhook receiver on loopback (aiohttp): answers each POST with the next scripted
status (then 200 for ever) and records what it received, deduplicating by the
`Idempotency-Key` header as a well-behaved receiver would."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class Received:
    key: str | None
    body: dict[str, Any]
    status: int


@dataclass
class WebhookReceiver:
    url: str = ""
    script: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    requests: list[Received] = field(default_factory=list)
    accepted: dict[str, dict[str, Any]] = field(default_factory=dict)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def handle(self, request: web.Request) -> web.Response:
        body = json.loads(await request.text())
        status, headers = self.script.pop(0) if self.script else (200, {})
        key = request.headers.get("Idempotency-Key")
        self.requests.append(Received(key, body, status))
        if 200 <= status < 300 and key is not None:
            self.accepted.setdefault(key, body)
        self.changed.set()
        return web.Response(status=status, headers=headers, text="ok" if status < 300 else "no")

    async def wait_for(self, requests: int, timeout: float = 20.0) -> None:
        async with asyncio.timeout(timeout):
            while len(self.requests) < requests:
                self.changed.clear()
                await self.changed.wait()


@asynccontextmanager
async def webhook_receiver(
    script: list[tuple[int, dict[str, str]]] | None = None,
) -> AsyncIterator[WebhookReceiver]:
    receiver = WebhookReceiver(script=list(script or []))
    app = web.Application()
    app.router.add_post("/{tail:.*}", receiver.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    receiver.url = f"http://127.0.0.1:{port}/hook"
    try:
        yield receiver
    finally:
        await runner.cleanup()
