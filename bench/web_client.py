"""The HTTP/1.1 client of `bench/web.py`: raw sockets to open the streams, then asyncio
protocols; no streams, no task woken per read.

The bench measures the server, but a thousand clients in one process cost that process
as much CPU as the server spends on them, and the old client (asyncio streams: a reader,
a writer and a task woken for every line read) timed the server behind its own work: it
connected all thousand sockets before sending the first request (each request was
written by the connection's `connection_made`, a loop turn after the connect), and a
stream's first event was timed when its task next ran. A browser sends its request as
soon as its connection is up, and each is its own machine. So here:

- the streams are opened in one tight loop (`open_at_once`): each socket connects and
  sends its request at once (on loopback the handshake is done when `connect` returns),
  and between two connects the loop reads whatever arrived, timing each stream's first
  event as its bytes are read;
- then each socket is handed to asyncio with its protocol, which parses the response as
  it arrives and notes the time in `data_received`; only the milestones a client waits
  for (its `done`, a response's end) resolve a future;
- a message is posted the same way: connect and send at once, then asyncio reads the
  answer.
"""

from __future__ import annotations

import asyncio
import errno
import json
import select
import socket
import time

# Seconds `open_at_once` waits for every stream's first event before it gives up.
OPEN_TIMEOUT = 120.0


def request_head(method: str, path: str, key: str, payload: bytes | None) -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {key}\r\n"
    if payload is not None:
        head += (
            f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
            "Connection: close\r\n"
        )
    return head.encode() + b"\r\n" + (payload or b"")


def dial(port: int, data: bytes) -> tuple[socket.socket, bytes]:
    """A non-blocking connection to the server with as much of `data` sent as it takes
    at once; the rest is returned (sent when the socket is writable)."""
    sock = socket.socket()
    sock.setblocking(False)
    code = sock.connect_ex(("127.0.0.1", port))
    if code not in (0, errno.EINPROGRESS):
        sock.close()
        raise ConnectionError(code, f"connecting to port {port}")
    try:
        return sock, data[sock.send(data) :]
    except (BlockingIOError, InterruptedError):
        return sock, data  # not connected yet
    except OSError as exc:
        if exc.errno != errno.ENOTCONN:
            raise
        return sock, data


class Request(asyncio.Protocol):
    """One request on a connection of its own (`Connection: close`): `status` resolves
    with the response's status once the server has closed the connection."""

    def __init__(self, unsent: bytes) -> None:
        self.unsent = unsent
        self.received = bytearray()
        self.status: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self.unsent:
            transport.write(self.unsent)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        self.received += data

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.status.done():
            if self.received.startswith(b"HTTP/1.1 "):
                self.status.set_result(int(self.received.split(b" ", 2)[1]))
            else:
                self.status.set_exception(exc or ConnectionError("no response"))


class EventStream(asyncio.Protocol):
    """`GET .../events`: the response's chunks parsed as they arrive. `started` is when
    it was opened, `opened` resolves with the time its first event (the `retry:` line)
    arrived, `done` with the time of its `done` event; `first_delta` is when its first
    `text_delta` arrived, `last_chunk` the time the model sent its last chunk (carried in
    that delta's text)."""

    def __init__(self, head: bytes) -> None:
        loop = asyncio.get_running_loop()
        self.unsent = head
        self.started = 0.0
        self.buffer = b""
        self.status = 0
        self.transport: asyncio.Transport | None = None
        self.opened: asyncio.Future[float] = loop.create_future()
        self.done: asyncio.Future[float] = loop.create_future()
        self.first_delta: float | None = None
        self.last_chunk: float | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        if self.unsent:
            transport.write(self.unsent)  # type: ignore[attr-defined]
            self.unsent = b""

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


def open_at_once(port: int, streams: list[EventStream]) -> list[socket.socket]:
    """Open every stream, one right after the other, reading what arrived between two
    connects (see the module docstring); returns once each has its first event."""
    poll = select.epoll()
    waiting: dict[int, tuple[socket.socket, EventStream]] = {}
    socks = []
    try:
        for stream in streams:
            stream.started = time.time()
            sock, stream.unsent = dial(port, stream.unsent)
            socks.append(sock)
            waiting[sock.fileno()] = sock, stream
            poll.register(sock, select.EPOLLIN | (select.EPOLLOUT if stream.unsent else 0))
            _read_ready(poll, waiting, 0)
        deadline = time.monotonic() + OPEN_TIMEOUT
        while waiting:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(waiting)} streams sent no first event")
            _read_ready(poll, waiting, 1.0)
    finally:
        poll.close()
    return socks


def _read_ready(
    poll: select.epoll, waiting: dict[int, tuple[socket.socket, EventStream]], timeout: float
) -> None:
    """Sends and reads what the sockets are ready for; a stream whose first event came
    is no longer watched (the rest of its response waits in the socket for asyncio)."""
    for fd, mask in poll.poll(timeout):
        sock, stream = waiting[fd]
        if mask & select.EPOLLOUT and stream.unsent:
            stream.unsent = stream.unsent[sock.send(stream.unsent) :]
            if not stream.unsent:
                poll.modify(fd, select.EPOLLIN)
        if mask & (select.EPOLLIN | select.EPOLLHUP | select.EPOLLERR):
            data = sock.recv(65536)
            if data:
                stream.data_received(data)
            else:
                stream.connection_lost(None)
        if stream.opened.done():
            poll.unregister(fd)
            del waiting[fd]


class Http:
    """Requests and event streams to the server on `port`, with the key `key`."""

    def __init__(self, port: int, key: str) -> None:
        self.port = port
        self.key = key

    async def request(self, method: str, path: str, body: dict | None = None) -> int:
        payload = json.dumps(body).encode() if body is not None else b""
        sock, unsent = dial(self.port, request_head(method, path, self.key, payload))
        loop = asyncio.get_running_loop()
        _, got = await loop.create_connection(lambda: Request(unsent), sock=sock)
        return await got.status

    async def streams(self, paths: list[str]) -> list[EventStream]:
        """Every stream of `paths` opened at once (`open_at_once`), then handed to asyncio."""
        streams = [EventStream(request_head("GET", p, self.key, None)) for p in paths]
        socks = open_at_once(self.port, streams)
        loop = asyncio.get_running_loop()
        for stream, sock in zip(streams, socks, strict=True):
            await loop.create_connection(lambda s=stream: s, sock=sock)  # type: ignore[misc]
        return streams
