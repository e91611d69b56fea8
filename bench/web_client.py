"""The HTTP/1.1 client of `bench/web.py`: asyncio protocols, no streams, no tasks per read.

The bench measures the server, but a thousand clients in one process cost that process
as much CPU as the server spends on them: on asyncio streams (`open_connection`, a
reader and a writer per connection, a task woken for every line read) the client took
about 0.34 ms of CPU per stream opened, as much as the server, and a stream's "first
event" was timed when the client's own loop got round to it. Here each connection is a
protocol that parses the response as it arrives and notes the time in `data_received`,
the moment the client's loop reads the bytes; only the milestones a client waits for
(the stream open, its `done`, a response's end) resolve a future.
"""

from __future__ import annotations

import asyncio
import json
import time


def request_head(method: str, path: str, key: str, payload: bytes | None) -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {key}\r\n"
    if payload is not None:
        head += (
            f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
            "Connection: close\r\n"
        )
    return head.encode() + b"\r\n" + (payload or b"")


class Request(asyncio.Protocol):
    """One request on a connection of its own (`Connection: close`): `status` resolves
    with the response's status once the server has closed the connection."""

    def __init__(self, head: bytes) -> None:
        self.head = head
        self.received = bytearray()
        self.status: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.write(self.head)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        self.received += data

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.status.done():
            if self.received.startswith(b"HTTP/1.1 "):
                self.status.set_result(int(self.received.split(b" ", 2)[1]))
            else:
                self.status.set_exception(exc or ConnectionError("no response"))


class EventStream(asyncio.Protocol):
    """`GET .../events`: the response's chunks parsed as they arrive; `opened` resolves
    with the time its first event (the `retry:` line) arrived, `done` with the time of its
    `done` event. `first_delta` is when its first `text_delta` arrived, `last_chunk` the
    time the model sent its last chunk (carried in that delta's text)."""

    def __init__(self, head: bytes) -> None:
        loop = asyncio.get_running_loop()
        self.head = head
        self.buffer = b""
        self.status = 0
        self.transport: asyncio.Transport | None = None
        self.opened: asyncio.Future[float] = loop.create_future()
        self.done: asyncio.Future[float] = loop.create_future()
        self.first_delta: float | None = None
        self.last_chunk: float | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        transport.write(self.head)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        now = time.time()
        self.buffer += data
        if not self.status:
            head, found, rest = self.buffer.partition(b"\r\n\r\n")
            if not found:
                return
            self.status, self.buffer = int(head.split(b" ", 2)[1]), rest
            if self.status != 200:
                self._fail(RuntimeError(f"stream answered {self.status}"))
                return
        for piece in self._chunks():
            self._event(now, piece)

    def _chunks(self) -> list[str]:
        """The whole events in the buffer (the server sends whole events, several to a
        chunk when they are ready together); a partial chunk stays for the next read."""
        pieces: list[str] = []
        while True:
            end = self.buffer.find(b"\r\n")
            if end < 0:
                return pieces
            size = int(self.buffer[:end], 16)
            if size == 0 or len(self.buffer) < end + size + 4:
                return pieces
            body = self.buffer[end + 2 : end + 2 + size]
            self.buffer = self.buffer[end + size + 4 :]
            pieces += [p for p in body.decode().split("\n\n") if p]

    def _event(self, now: float, piece: str) -> None:
        if not self.opened.done():
            self.opened.set_result(now)  # the retry line: the stream is open
            return
        event = data = None
        for line in piece.split("\n"):
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data = line[6:]
        if event == "text_delta" and data is not None:
            self.first_delta = self.first_delta or now
            text = json.loads(data)["text"]
            if text.startswith("@"):
                self.last_chunk = float(text[1:])
        elif event == "done" and not self.done.done():
            self.done.set_result(now)

    def _fail(self, exc: Exception) -> None:
        for future in (self.opened, self.done):
            if not future.done():
                future.set_exception(exc)
                future.exception()  # retrieved: the one awaited raises it
        if self.transport is not None:
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(exc or ConnectionError("the stream closed"))

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


class Http:
    """Requests and event streams to the server on `port`, with the key `key`."""

    def __init__(self, port: int, key: str) -> None:
        self.port = port
        self.key = key

    async def request(self, method: str, path: str, body: dict | None = None) -> int:
        payload = json.dumps(body).encode() if body is not None else b""
        head = request_head(method, path, self.key, payload)
        loop = asyncio.get_running_loop()
        _, got = await loop.create_connection(lambda: Request(head), "127.0.0.1", self.port)
        return await got.status

    async def stream(self, path: str) -> EventStream:
        head = request_head("GET", path, self.key, None)
        loop = asyncio.get_running_loop()
        _, got = await loop.create_connection(lambda: EventStream(head), "127.0.0.1", self.port)
        return got
