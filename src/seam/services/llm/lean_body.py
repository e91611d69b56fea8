"""The connection, response head and body of `lean_http`'s HTTP/1.1.

`ChunkedDecoder` undoes the chunked transfer encoding over whatever a read brought, any
number of chunks at once (a streamed answer sends one chunk per token), with no I/O of
its own. `Body` is the response stream httpx reads: a read at a time, the connection
handed back to the pool once the body was read to its end on a kept-alive connection,
closed otherwise. Failures are httpx's exceptions (see `lean_http`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import httpx

_READ = 65_536
_HEAD_LIMIT = 65_536
Headers = list[tuple[bytes, bytes]]


class Connection:
    """One socket's streams, and what a connection that returned nothing raises."""

    __slots__ = ("nothing_back", "reader", "writer")

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        nothing_back: type[Exception],
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.nothing_back = nothing_back

    def usable(self) -> bool:
        """Still open at both ends, as far as the event loop has heard."""
        return not self.writer.is_closing() and not self.reader.at_eof()

    def close(self) -> None:
        self.writer.close()

    async def send(self, message: bytes, limit: float | None) -> None:
        try:
            self.writer.write(message)
            if self.writer.transport.get_write_buffer_size():
                async with asyncio.timeout(limit):
                    await self.writer.drain()
        except TimeoutError as exc:
            raise httpx.WriteTimeout("sending the request timed out") from exc
        except OSError as exc:
            raise httpx.WriteError(str(exc) or type(exc).__name__) from exc

    async def read(self, limit: float | None) -> bytes:
        """What the next read brings (b"" at the end of the stream)."""
        try:
            async with asyncio.timeout(limit):
                return await self.reader.read(_READ)
        except TimeoutError as exc:
            raise httpx.ReadTimeout("reading the response timed out") from exc
        except OSError as exc:
            raise httpx.ReadError(str(exc) or type(exc).__name__) from exc


async def read_head(
    connection: Connection, limit: float | None
) -> tuple[int, Headers, bytes, bool]:
    """Status, headers, reason and whether the connection may be kept, past any 1xx."""
    while True:
        head = await _head_bytes(connection, limit)
        status, headers, reason, keep = _parse_head(head)
        if not 100 <= status < 200:
            return status, headers, reason, keep


async def _head_bytes(connection: Connection, limit: float | None) -> bytes:
    try:
        async with asyncio.timeout(limit):
            return await connection.reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            raise connection.nothing_back() from exc
        raise httpx.RemoteProtocolError("server disconnected during the response head") from exc
    except asyncio.LimitOverrunError as exc:
        raise httpx.RemoteProtocolError("the response head is too long") from exc
    except TimeoutError as exc:
        raise httpx.ReadTimeout("waiting for the response timed out") from exc
    except ConnectionError as exc:
        raise connection.nothing_back() from exc
    except OSError as exc:
        raise httpx.ReadError(str(exc) or type(exc).__name__) from exc


def _parse_head(head: bytes) -> tuple[int, Headers, bytes, bool]:
    lines = head[:-4].split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    try:
        if not parts[0].startswith(b"HTTP/1."):
            raise ValueError
        status = int(parts[1])
    except (IndexError, ValueError):
        raise httpx.RemoteProtocolError(f"not an HTTP/1.1 status line: {lines[0][:80]!r}") from None
    headers: Headers = []
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not name or name != name.strip():
            raise httpx.RemoteProtocolError(f"malformed response header: {line[:80]!r}")
        headers.append((name, value.strip()))
    keep = parts[0] == b"HTTP/1.1" and not any(
        n.lower() == b"connection" and b"close" in v.lower() for n, v in headers
    )
    return status, headers, parts[2] if len(parts) > 2 else b"", keep


class ChunkedDecoder:
    """Chunked transfer encoding undone over any slice of the body: `feed` returns the
    payload bytes the slice completed; `done` once the last chunk and trailers are in."""

    __slots__ = ("_buffer", "_remaining", "_state", "done")

    def __init__(self) -> None:
        self._buffer = b""
        self._remaining = 0
        self._state = "size"  # size, data, crlf, trailer
        self.done = False

    def feed(self, data: bytes) -> bytes:
        buffer = self._buffer + data if self._buffer else data
        out: list[bytes] = []
        at = 0
        while not self.done:
            if self._state == "data":
                take = min(self._remaining, len(buffer) - at)
                out.append(buffer[at : at + take])
                at += take
                self._remaining -= take
                if self._remaining:
                    break
                self._state = "crlf"
            end = buffer.find(b"\r\n", at)
            if end < 0:
                break
            line, at = buffer[at:end], end + 2
            self._line(line)
        self._buffer = buffer[at:]
        return b"".join(out)

    @property
    def leftover(self) -> bool:
        return bool(self._buffer)

    def _line(self, line: bytes) -> None:
        """One line of framing: a chunk's size, the end of its data, or a trailer."""
        if self._state == "crlf":
            if line:
                raise httpx.RemoteProtocolError("a chunk is longer than its size said")
            self._state = "size"
        elif self._state == "size":
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise httpx.RemoteProtocolError(f"bad chunk size line {line[:40]!r}") from None
            self._remaining = size
            self._state = "data" if size else "trailer"
        elif not line:  # the blank line after the trailers
            self.done = True


class Body(httpx.AsyncByteStream):
    """A response's body, a network read at a time (chunked, sized or to the close)."""

    def __init__(
        self,
        connection: Connection,
        status: int,
        headers: Headers,
        keep: bool,
        read_timeout: float | None,
        release: Callable[[], None],
    ) -> None:
        self._connection = connection
        self._timeout = read_timeout
        self._release: Callable[[], None] | None = release
        self._keep = keep
        self._whole = False
        self._chunked = False
        self._length: int | None = None
        for name, value in headers:
            lowered = name.lower()
            if lowered == b"transfer-encoding" and b"chunked" in value.lower():
                self._chunked = True
            elif lowered == b"content-length" and value.isdigit():
                self._length = int(value)
        if status in (204, 304):
            self._chunked, self._length = False, 0
        if not self._chunked and self._length is None:
            self._keep = False  # read until the server closes

    async def __aiter__(self) -> AsyncIterator[bytes]:
        reads = self._chunked_reads() if self._chunked else self._sized_reads(self._length)
        async for data in reads:
            yield data
        self._whole = True

    async def _chunked_reads(self) -> AsyncIterator[bytes]:
        decoder = ChunkedDecoder()
        while not decoder.done:
            data = await self._connection.read(self._timeout)
            if not data:
                raise _cut_short()
            payload = decoder.feed(data)
            if payload:
                yield payload
        if decoder.leftover:  # bytes after the body: the connection is not reused
            self._keep = False

    async def _sized_reads(self, length: int | None) -> AsyncIterator[bytes]:
        left = length
        while left is None or left > 0:
            data = await self._connection.read(self._timeout)
            if not data:
                if left is None:
                    return
                raise _cut_short()
            if left is not None:
                if len(data) > left:  # more than it said: the connection is not reused
                    data, self._keep = data[:left], False
                left -= len(data)
            yield data

    async def aclose(self) -> None:
        release, self._release = self._release, None
        if release is None:
            return
        if self._whole and self._keep:
            release()
        else:
            self._connection.close()


def _cut_short() -> httpx.RemoteProtocolError:
    return httpx.RemoteProtocolError("peer closed connection without sending complete message body")
