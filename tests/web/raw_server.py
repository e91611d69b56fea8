"""A bare ASGI app served for real by uvicorn with one of `seam serve`'s protocols, on
127.0.0.1: the socket listens before the server starts, so a client may connect at once
(the kernel queues it until uvicorn accepts)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from typing import Any

import uvicorn

SLACK = 10.0


@contextlib.asynccontextmanager
async def raw_server(app: Any, protocol: Any, **config: Any) -> AsyncIterator[int]:
    """Serves `app` with `protocol` (uvicorn's `http=`) and `config`; yields the port."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    settings = uvicorn.Config(app, log_level="warning", lifespan="off", http=protocol, **config)
    server = uvicorn.Server(settings)
    task = asyncio.ensure_future(server.serve(sockets=[sock]))
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, SLACK)
        sock.close()
