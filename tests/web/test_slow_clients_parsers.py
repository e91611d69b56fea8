"""The slow-head deadline holds with either request parser (`slow_clients.py`): `seam serve`
runs httptools when it is installed and h11 otherwise, so both are served for real here,
each with a trickling client, a silent one and a pipelined pair of requests."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import pytest

from seam.apps.web.slow_clients import HTTPTOOLS_PROTOCOL, head_timeout_protocol
from tests.web.raw_server import raw_server

DEADLINE = 0.3
SLACK = 10.0
PARSERS = ["h11"] + (["httptools"] if HTTPTOOLS_PROTOCOL is not None else [])


async def _hello(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    head = [(b"content-length", b"5")]
    await send({"type": "http.response.start", "status": 200, "headers": head})
    await send({"type": "http.response.body", "body": b"hello"})


def _server(parser: str) -> contextlib.AbstractAsyncContextManager[int]:
    return raw_server(_hello, head_timeout_protocol(DEADLINE, parser=parser))


@pytest.mark.parametrize("parser", PARSERS)
async def test_a_trickled_head_is_cut_and_a_silent_connection_too(parser: str) -> None:
    async with _server(parser) as port:
        started = time.monotonic()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        silent_reader, silent_writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n")
        while True:
            try:
                data = await asyncio.wait_for(reader.read(1), 0.05)
            except TimeoutError:
                writer.write(b"X")  # one more byte of a header that never ends
                assert time.monotonic() - started < SLACK, "never cut"
                continue
            assert data == b"", data
            break
        assert time.monotonic() - started >= DEADLINE
        assert await asyncio.wait_for(silent_reader.read(), SLACK) == b""
        writer.close()
        silent_writer.close()


@pytest.mark.parametrize("parser", PARSERS)
async def test_pipelined_requests_on_a_kept_connection_are_answered_past_the_deadline(
    parser: str,
) -> None:
    async with _server(parser) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for _ in range(2):
            writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * 2)  # two in one write
            for _ in range(2):
                status = await asyncio.wait_for(reader.readline(), SLACK)
                assert status.startswith(b"HTTP/1.1 200"), status
                while (await reader.readline()) != b"\r\n":
                    pass
                assert await reader.readexactly(5) == b"hello"
            # Idle for less than the deadline between rounds: still open.
            with contextlib.suppress(TimeoutError):
                assert await asyncio.wait_for(reader.read(1), DEADLINE / 3) != b""
        writer.close()
