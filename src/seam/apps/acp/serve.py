"""`seam acp`: serve ACP on stdin/stdout until the editor closes the connection.

stdout is the protocol channel, so it is taken over first: the protocol writes to a
duplicate of the original stdout, and file descriptor 1 (and `sys.stdout`) then point at
stderr, so a stray print or a child process's output can never corrupt the stream.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import cast

import acp

from seam.apps.acp.access import EditorAccess
from seam.apps.acp.agent import SeamAgent
from seam.apps.acp.storage import ClientStorage
from seam.wiring.acp import create_acp_runtime, file_storage
from seam.wiring.web_keys import DEFAULT_TENANT


async def _protocol_streams() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    reader = asyncio.StreamReader(limit=50 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, out)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer


async def serve_acp(model: str | None = None, tenant: str | None = None) -> int:
    """`tenant`: run the editor's sessions as that tenant, not the owner (`access.py`)."""
    reader, writer = await _protocol_streams()
    # The real filesystem until the client says it offers its own.
    storage = ClientStorage(file_storage())
    runtime = create_acp_runtime(storage, model, tenant=tenant)
    async with runtime:
        # SeamAgent implements the methods it supports; the SDK answers the optional rest
        # (fork/resume sessions) with "method not found". `session/close` is still marked
        # unstable in the SDK: without the flag it would be refused.
        access = EditorAccess(None if tenant in (None, DEFAULT_TENANT) else tenant)
        agent = cast("acp.Agent", SeamAgent(runtime, storage, access))
        await acp.run_agent(agent, writer, reader, use_unstable_protocol=True)
    return 0
