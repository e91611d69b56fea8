"""A file server on loopback for attachments' downloads: each GET is counted, and a path
can be held (the response waits until the test releases it), to stand for a slow
download without a sleep."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import ClientSession, web
from aiohttp.test_utils import TestServer

from seam.contracts.chat import Attachment


class FileServer:
    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.gets: list[str] = []
        self.held: dict[str, asyncio.Event] = {}
        self.waiting = asyncio.Event()  # set when a held download is waiting
        self.base = ""

    def hold(self, name: str) -> asyncio.Event:
        """Hold downloads of `name` until the returned event is set."""
        self.held[name] = asyncio.Event()
        return self.held[name]

    async def _get(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        self.gets.append(name)
        gate = self.held.get(name)
        if gate is not None:
            self.waiting.set()
            await gate.wait()
        return web.Response(body=self.files[name])

    def document(self, name: str, content: bytes, mime: str = "text/plain") -> Attachment:
        """A document attachment whose `fetch` downloads `name` from this server."""
        self.files[name] = content
        url = f"{self.base}/{name}"

        async def fetch() -> bytes:
            async with ClientSession() as session, session.get(url) as response:
                response.raise_for_status()
                return await response.read()

        return Attachment("document", name, mime, len(content), fetch)


@asynccontextmanager
async def file_server() -> AsyncIterator[FileServer]:
    server = FileServer()
    app = web.Application()
    app.router.add_get("/{name}", server._get)
    http = TestServer(app, host="127.0.0.1")
    await http.start_server()
    server.base = str(http.make_url("")).rstrip("/")
    try:
        yield server
    finally:
        for gate in server.held.values():
            gate.set()
        await http.close()
