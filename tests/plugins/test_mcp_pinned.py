"""A run-time MCP server over HTTP is connected at the address that passed the check,
not at whatever its name resolves to a moment later (DNS rebinding).

The name `mcp.pinned.test` resolves only through the resolver handed in (to loopback,
listed in `allow_private`); the system resolver does not know it, so the session can only
work when every request goes to the checked address. The server records the Host header
each request carried: the name, as the URL says, not the address.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
from mcp.server.transport_security import TransportSecuritySettings

from seam.plugins.mcp.connection import ServerConnection, ServerError
from seam.plugins.mcp.spec import ServerSpec
from tests.support.mcp_server import build_server

NAME = "mcp.pinned.test"


class _Server(uvicorn.Server):
    def install_signal_handlers(self) -> None:  # the test's loop, not the process's signals
        return None


def recording_hosts(app: Any, hosts: list[bytes]) -> Any:
    async def recorded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            hosts.append(dict(scope["headers"]).get(b"host", b""))
        await app(scope, receive, send)

    return recorded


@asynccontextmanager
async def http_server(hosts: list[bytes]) -> AsyncIterator[int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    # The server's own DNS-rebinding guard accepts the name only: a request that arrived
    # with the address as its Host would be refused.
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=[f"{NAME}:*"]
    )
    served = build_server("docs").streamable_http_app(transport_security=security)
    app = recording_hosts(served, hosts)
    server = _Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)
        sock.close()


async def test_the_session_goes_to_the_checked_address_with_the_name_as_host() -> None:
    asked: list[str] = []

    async def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        return ["127.0.0.1"] if host == NAME else []

    hosts: list[bytes] = []
    async with http_server(hosts) as port:
        spec = ServerSpec(name="docs", url=f"http://{NAME}:{port}/mcp", allow_private=(NAME,))
        conn = ServerConnection(spec, resolve=resolve)
        try:
            await conn.client()
            result = await conn.call("add", {"a": 2, "b": 3})
        finally:
            await conn.aclose()
    assert conn.state == "stopped"
    assert "5" in str(result)
    assert asked == [NAME]  # resolved once, for the check
    assert hosts and set(hosts) == {f"{NAME}:{port}".encode()}


async def test_a_name_that_resolves_to_loopback_is_refused_unless_listed() -> None:
    async def resolve(host: str, port: int) -> list[str]:
        return ["127.0.0.1"]

    spec = ServerSpec(name="docs", url=f"http://{NAME}:9/mcp", allow_private=())
    conn = ServerConnection(spec, resolve=resolve)
    try:
        await conn.client()
    except ServerError as exc:
        assert f"{NAME} resolves to 127.0.0.1, a loopback address" in str(exc)
        assert "allow_private" in str(exc)
    else:
        raise AssertionError("a loopback answer was let through")
    finally:
        await conn.aclose()
