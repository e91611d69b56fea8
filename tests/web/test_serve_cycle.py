"""`seam serve`'s request cycle (`cycle.py`) on a real server with its protocol: an event
stream's prebuilt head, written with its first event (`first_write.py`), reads byte for
byte as uvicorn's own head and first chunk, and where the hold does not fit (no
keep-alive, HEAD) uvicorn's path answers; a client that goes away is heard through
`WHEN_GONE`, with no task awaiting `receive`."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest

from seam.apps.web.cycle import WHEN_GONE
from seam.apps.web.event_streams import SECURED
from seam.apps.web.first_write import PrebuiltHead, encode_lines
from seam.apps.web.slow_clients import HTTPTOOLS_PROTOCOL, head_timeout_protocol
from seam.apps.web.streams import PREAMBLE, chunk
from tests.web.raw_server import SLACK, raw_server

pytestmark = pytest.mark.skipif(HTTPTOOLS_PROTOCOL is None, reason="httptools not installed")


async def _stream(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """A short event stream: `/prebuilt` starts it with `SECURED`, `/plain` with a list
    of the same headers (uvicorn's own path)."""
    if scope["type"] != "http":
        return
    headers = SECURED if scope["path"] == "/prebuilt" else list(SECURED)
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send(chunk(PREAMBLE))
    await send(chunk(b"data: x\n\n"))
    await send({"type": "http.response.body", "body": b"", "more_body": False})


def _server(app: Any = _stream) -> contextlib.AbstractAsyncContextManager[int]:
    # No date header: the two responses compared may straddle a second.
    return raw_server(app, head_timeout_protocol(SLACK), date_header=False)


async def _get(port: int, head: str) -> bytes:
    """The raw response to `head` (a request line and headers), read to its end."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(head.encode() + b"\r\n")
    data = b""
    while not data.endswith(b"0\r\n\r\n") and not reader.at_eof():
        data += await asyncio.wait_for(reader.read(65536), SLACK)
    writer.close()
    return data


@pytest.mark.parametrize(
    "request_line",
    ["GET {} HTTP/1.1\r\nHost: x\r\n", "GET {} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"],
)
async def test_a_prebuilt_head_reads_as_uvicorns_own(request_line: str) -> None:
    async with _server() as port:
        prebuilt = await _get(port, request_line.format("/prebuilt"))
        plain = await _get(port, request_line.format("/plain"))
    assert prebuilt == plain
    assert prebuilt.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"transfer-encoding: chunked\r\n\r\nd\r\nretry: 1000\n\n\r\n" in prebuilt


async def test_a_head_request_gets_uvicorns_head_alone() -> None:
    async with _server() as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"HEAD /prebuilt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = await asyncio.wait_for(reader.read(), SLACK)
        writer.close()
    assert data.startswith(b"HTTP/1.1 200 OK\r\n")
    assert data.endswith(b"\r\n\r\n") and b"retry" not in data


def test_a_prebuilt_head_refuses_what_uvicorn_would_and_framing_headers() -> None:
    assert tuple(SECURED) == SECURED and isinstance(SECURED, tuple)
    assert encode_lines(((b"X-A", b"1"),)) == b"x-a: 1\r\n"
    for bad in ((b"x a", b"1"), (b"x-a", b"1\r\n2"), (b"Content-Length", b"3")):
        with pytest.raises(ValueError, match="prebuilt head"):
            PrebuiltHead((bad,))


async def test_a_client_that_goes_away_is_heard_through_the_scope() -> None:
    gone = asyncio.Event()
    heard: list[bool] = []

    async def waits(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": SECURED})
        await send(chunk(PREAMBLE))
        scope[WHEN_GONE](gone.set)
        await gone.wait()
        heard.append(True)

    async with _server(waits) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        head = await asyncio.wait_for(reader.readuntil(b"retry: 1000\n\n"), SLACK)
        assert head.startswith(b"HTTP/1.1 200 OK\r\n")
        writer.close()
        await asyncio.wait_for(gone.wait(), SLACK)
    assert heard == [True]
