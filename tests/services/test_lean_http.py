"""The lean HTTP/1.1 transport against a raw loopback server, and its pure decoders."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest

from seam.services.llm.lean_body import ChunkedDecoder
from seam.services.llm.lean_http import LeanTransport
from seam.services.llm.sse import LineSplitter
from tests.support.openai_server import closed_port


class RawServer:
    """Answers each request with the next scripted bytes; counts connections."""

    def __init__(self, replies: list[bytes], close_after: bool = False) -> None:
        self.replies = replies
        self.close_after = close_after
        self.accepted = 0
        self.port = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        try:
            while self.replies:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":")[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length:")
                    ),
                    0,
                )
                await reader.readexactly(length)
                writer.write(self.replies.pop(0))
                await writer.drain()
                if self.close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()


@pytest.fixture
async def serve() -> AsyncIterator[Callable[..., Awaitable[RawServer]]]:
    servers: list[asyncio.Server] = []

    async def start(replies: list[bytes], close_after: bool = False) -> RawServer:
        raw = RawServer(replies, close_after)
        server = await asyncio.start_server(raw.handle, "127.0.0.1", 0)
        raw.port = server.sockets[0].getsockname()[1]
        servers.append(server)
        return raw

    yield start
    for server in servers:
        server.close()


def chunked(*parts: bytes, extra: bytes = b"") -> bytes:
    body = b"".join(b"%X\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"
    return b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n" + extra + b"\r\n" + body


def sized(body: bytes, extra: bytes = b"", version: bytes = b"HTTP/1.1") -> bytes:
    return version + b" 200 OK\r\ncontent-length: %d\r\n%s\r\n%s" % (len(body), extra, body)


async def get_all(client: httpx.AsyncClient, port: int, count: int) -> list[bytes]:
    bodies = []
    for _ in range(count):
        async with client.stream("POST", f"http://127.0.0.1:{port}/x", content=b"{}") as r:
            bodies.append(b"".join([data async for data in r.aiter_raw()]))
    return bodies


async def test_chunked_and_sized_bodies_reuse_one_connection(
    serve: Callable[..., Awaitable[RawServer]],
) -> None:
    server = await serve([chunked(b"data: a\n\n", b"data: b\n\n"), sized(b"whole"), chunked()])
    async with httpx.AsyncClient(transport=LeanTransport()) as client:
        bodies = await get_all(client, server.port, 3)
    assert bodies == [b"data: a\n\ndata: b\n\n", b"whole", b""]
    assert server.accepted == 1


@pytest.mark.parametrize(
    "reply",
    [
        sized(b"bye", b"connection: close\r\n"),
        sized(b"old", version=b"HTTP/1.0"),
        b"HTTP/1.1 200 OK\r\n\r\nto the end",  # no length: read until the server closes
    ],
)
async def test_a_connection_that_cannot_be_kept_is_not(
    serve: Callable[..., Awaitable[RawServer]], reply: bytes
) -> None:
    server = await serve([reply, sized(b"next")], close_after=True)
    async with httpx.AsyncClient(transport=LeanTransport()) as client:
        bodies = await get_all(client, server.port, 2)
    assert bodies[1] == b"next"
    assert server.accepted == 2


async def test_a_kept_connection_the_server_closed_is_replaced(
    serve: Callable[..., Awaitable[RawServer]],
) -> None:
    # The server closes after each answer without saying so: the next request finds
    # the pooled connection gone (or sends into it and gets nothing) and uses a new one.
    server = await serve([sized(b"one"), sized(b"two")], close_after=True)
    async with httpx.AsyncClient(transport=LeanTransport()) as client:
        assert await get_all(client, server.port, 2) == [b"one", b"two"]
    assert server.accepted == 2


async def test_failures_are_httpx_errors(serve: Callable[..., Awaitable[RawServer]]) -> None:
    cut = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nab"
    server = await serve([cut], close_after=True)
    async with httpx.AsyncClient(transport=LeanTransport()) as client:
        with pytest.raises(httpx.RemoteProtocolError, match="complete message body"):
            await get_all(client, server.port, 1)
        with pytest.raises(httpx.RemoteProtocolError, match="without sending a response"):
            await get_all(client, server.port, 1)  # the server answers nothing now
        with pytest.raises(httpx.UnsupportedProtocol):
            await client.get("https://127.0.0.1:1/")
        with pytest.raises(httpx.ConnectError) as refused:
            await client.get(f"http://127.0.0.1:{closed_port()}/")
        assert isinstance(refused.value.__cause__, ConnectionRefusedError)


def test_the_chunked_decoder_takes_the_body_in_any_slices() -> None:
    body = b"4;ext=1\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nTrailer: x\r\n\r\n"
    for size in range(1, len(body) + 1):
        decoder = ChunkedDecoder()
        out = b"".join(decoder.feed(body[i : i + size]) for i in range(0, len(body), size))
        assert out == b"Wikipedia in\r\n\r\nchunks."
        assert decoder.done and not decoder.leftover


def test_the_chunked_decoder_refuses_bad_framing() -> None:
    with pytest.raises(httpx.RemoteProtocolError, match="chunk size"):
        ChunkedDecoder().feed(b"zz\r\n")
    with pytest.raises(httpx.RemoteProtocolError, match="longer than its size"):
        ChunkedDecoder().feed(b"2\r\nabc\r\n")


def test_lines_end_at_cr_lf_or_crlf_across_reads_and_nowhere_else() -> None:
    text = "data: a\r\n\r\ndata: b\rdata: c\n\ndata: é \u2028 x\r\n".encode()
    for size in range(1, len(text) + 1):
        splitter = LineSplitter()
        lines: list[str] = []
        for i in range(0, len(text), size):
            lines += splitter.feed(text[i : i + size])
        lines += splitter.flush()
        assert lines == ["data: a", "", "data: b", "data: c", "", "data: é \u2028 x"]
    splitter = LineSplitter()
    assert splitter.feed(b"no ending") == [] and splitter.flush() == ["no ending"]
