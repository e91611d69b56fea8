"""A real `seam serve` app on uvicorn, on 127.0.0.1 and a port of its own, in-process.

The socket is bound and listening before the server task starts, so a client connects at
once (the kernel queues it until uvicorn accepts): no waiting for readiness.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from seam.apps.web.app import create_app
from seam.apps.web.auth import Authenticator
from seam.apps.web.backend import WebBackend
from seam.apps.web.keys import KeyStore
from seam.apps.web.retries import RetryBoard
from seam.apps.web.serve import server_config
from seam.contracts import ToolContext
from seam.contracts.budget import BudgetGate
from seam.contracts.model import ModelProvider
from seam.core import DefaultToolRegistry, LoopOptions
from seam.services.sessions.sqlite import SQLiteSessionStore
from seam.wiring import assemble_runtime
from seam.wiring.settings import Settings
from seam.wiring.web_keys import WebSection

LOGIN = "login-token-for-tests"


class AskFirst:
    """A tool that needs a person's approval before it does anything."""

    name = "danger"
    description = "does something that needs approval"
    parameters: Mapping[str, Any] = {"type": "object", "properties": {}}
    concurrent = False
    idempotent = False

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        assert ctx.approvals is not None
        decision = await ctx.approvals.request(
            call_id=ctx.call_id, tool=self.name, command="rm -r build", reason="recursive delete"
        )
        return f"decision: {decision}"


class Echo:
    name = "echo"
    description = "returns its text"
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    }
    concurrent = True
    idempotent = True

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        return f"echo: {args['text']}"


@dataclass
class Served:
    url: str
    backend: WebBackend
    keys: dict[str, str]  # tenant -> key
    store: Any

    def headers(self, tenant: str = "local") -> dict[str, str]:
        return {"Authorization": f"Bearer {self.keys[tenant]}"}

    def client(self, tenant: str | None = "local", **kwargs: Any) -> httpx.AsyncClient:
        headers = self.headers(tenant) if tenant else {}
        return httpx.AsyncClient(base_url=self.url, headers=headers, timeout=20, **kwargs)


def tools() -> DefaultToolRegistry:
    registry = DefaultToolRegistry()
    registry.register_tool(AskFirst())
    registry.register_tool(Echo())
    return registry


@asynccontextmanager
async def serving(
    model: ModelProvider,
    tmp: Path,
    *,
    config: WebSection | None = None,
    store: Any = None,
    approval_timeout: float = 30.0,
    retries: RetryBoard | None = None,
    sees_images: bool = False,
    env: Mapping[str, str] | None = None,
    budget: BudgetGate | None = None,
) -> AsyncIterator[Served]:
    tmp.mkdir(parents=True, exist_ok=True)
    store = store if store is not None else SQLiteSessionStore(str(tmp / "sessions.db"))
    runtime = assemble_runtime(
        model=model,
        store=store,
        tools=tools(),
        options=LoopOptions(approval_timeout=approval_timeout),
        budget=budget,
    )
    backend = WebBackend(
        runtime,
        config or WebSection(heartbeat_seconds=0.5),
        rescue_seconds=0.2,
        tenants_dir=tmp / "tenants",
        retries=retries or RetryBoard(),
        sees_images=lambda _pid: sees_images,
    )
    keystore = KeyStore(tmp / "keys.json")
    keys = {t: keystore.create(f"key-{t}", t) for t in ("local", "alpha", "beta")}
    # The dashboard's owner sections read this home (its config.toml, cron jobs, keys).
    settings = Settings(home=tmp / "home", working_dir=tmp, env=dict(env or {}))
    settings.home.mkdir(exist_ok=True)
    app = create_app(
        backend,
        Authenticator(keystore, b"s" * 32, LOGIN, "local"),
        settings=settings,
        keys=keystore,
    )
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    port = sock.getsockname()[1]
    # `seam serve`'s own settings (its slow-head and idle timeouts from `config`).
    server = uvicorn.Server(server_config(app, "127.0.0.1", port, backend.config))
    task = asyncio.ensure_future(server.serve(sockets=[sock]))
    try:
        yield Served(f"http://127.0.0.1:{port}", backend, keys, store)
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 20)
        sock.close()


async def sse_events(
    client: httpx.AsyncClient,
    path: str,
    *,
    until: str = "done",
    count: int = 1,
    headers: dict[str, str] | None = None,
    stop_after: int | None = None,
) -> list[dict[str, Any]]:
    """Read an event stream until the `count`-th `until` event (or `stop_after` events);
    each item is {"id", "event", "data"}."""
    async with client.stream("GET", path, headers=headers or {}) as response:
        assert response.status_code == 200, await response.aread()
        assert response.headers["content-type"].startswith("text/event-stream")
        return await read_sse(response.aiter_lines(), until, count, stop_after)


async def read_sse(
    lines: AsyncIterator[str], until: str = "done", count: int = 1, stop_after: int | None = None
) -> list[dict[str, Any]]:
    """The events of a stream's `lines` until the `count`-th `until` event (or `stop_after`
    events); each item is {"event", "data"} and its "id" when it has one."""
    out: list[dict[str, Any]] = []
    seen = 0
    item: dict[str, Any] = {}
    async for line in lines:
        if line.startswith("id: "):
            item["id"] = int(line[4:])
        elif line.startswith("event: "):
            item["event"] = line[7:]
        elif line.startswith("data: "):
            item["data"] = json.loads(line[6:])
        elif line == "" and "event" in item:
            out.append(item)
            if item["event"] == until:
                seen += 1
            item = {}
            if seen >= count or (stop_after is not None and len(out) >= stop_after):
                break
    return out
