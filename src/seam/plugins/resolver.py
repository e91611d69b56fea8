"""`system_resolve`: the resolver every plugin that connects out uses by default.

`web_fetch`, webhook deliveries and MCP servers check every address a name resolves to
(`contracts/addresses.py`) and then connect to one of those very addresses; this is the
I/O half, kept out of `contracts/` (which does none). Tests hand in their own `Resolver`.
"""

from __future__ import annotations

import asyncio
import socket


async def system_resolve(host: str, port: int) -> list[str]:
    """Every address `host` resolves to, on the running loop's resolver (not blocking it):
    the I/O at the edge; the check itself is shared (`contracts.addresses`)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))
