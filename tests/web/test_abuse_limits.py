"""`seam serve` under abuse: clients that trickle a request head, or open a connection and
say nothing, are disconnected after `[web] header_timeout_seconds` while everyone else is
answered; and a tenant's keys share one rate limit besides each key's own."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

from seam.core import ScriptedModel
from seam.wiring.web_keys import WebSection
from tests.web.harness import Served, serving

HEAD_TIMEOUT = 0.5
# How long a connection may outlive its deadline before the test calls it a failure.
SLACK = 10.0
QUICK_HEADS = WebSection(header_timeout_seconds=HEAD_TIMEOUT, heartbeat_seconds=1)


def served_port(served: Served) -> int:
    return int(served.url.rsplit(":", 1)[1])


async def _closed_while_trickling(port: int) -> float:
    """Connect and send a header byte every tenth of a second (waiting on the socket, not
    sleeping) until the server closes the connection; how long it was open."""
    started = time.monotonic()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
    try:
        while time.monotonic() - started < HEAD_TIMEOUT + SLACK:
            try:
                data = await asyncio.wait_for(reader.read(1), 0.1)
            except TimeoutError:
                writer.write(b"X")  # one more byte of a header that never ends
                continue
            except ConnectionResetError:
                # Cut while a byte was in flight: the kernel resets a socket closed with
                # unread data, which is the server closing it too.
                return time.monotonic() - started
            assert data == b"", data  # nothing is answered to a head not yet complete
            return time.monotonic() - started
        raise AssertionError("the slow client was never disconnected")
    finally:
        writer.close()


async def test_a_slow_head_and_an_idle_connection_are_cut_while_others_are_answered(
    tmp_path: Path,
) -> None:
    async with serving(ScriptedModel([]), tmp_path, config=QUICK_HEADS) as served:
        port = served_port(served)
        idle_reader, idle_writer = await asyncio.open_connection("127.0.0.1", port)
        trickling = [asyncio.ensure_future(_closed_while_trickling(port)) for _ in range(50)]
        async with served.client() as client:
            answered = 0
            while not all(t.done() for t in trickling):
                assert (await client.get("/api/sessions")).status_code == 200
                answered += 1
        took = await asyncio.gather(*trickling)
        assert answered > 0 and min(took) >= HEAD_TIMEOUT and max(took) < HEAD_TIMEOUT + SLACK
        assert await asyncio.wait_for(idle_reader.read(), SLACK) == b""  # said nothing: cut
        idle_writer.close()


async def test_a_slow_body_and_later_requests_are_not_cut_once_their_head_is_in(
    tmp_path: Path,
) -> None:
    async with serving(ScriptedModel([]), tmp_path, config=QUICK_HEADS) as served:
        port = served_port(served)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        body = b'{"name": "slow-body"}'
        writer.write(
            b"POST /api/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + f"Authorization: Bearer {served.keys['local']}\r\n".encode()
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
        )
        started = time.monotonic()
        for byte in body:  # the body takes longer than the head's deadline
            with contextlib.suppress(TimeoutError):
                assert await asyncio.wait_for(reader.read(1), 0.05) != b"", "cut mid-body"
            writer.write(bytes([byte]))
        assert time.monotonic() - started > HEAD_TIMEOUT
        status = await asyncio.wait_for(reader.readline(), SLACK)
        assert status.startswith(b"HTTP/1.1 20"), status
        writer.close()
        async with served.client() as client:
            for _ in range(3):  # kept alive across requests: each head gets its own deadline
                assert (await client.get("/api/sessions")).status_code == 200


async def test_the_keys_of_one_tenant_share_its_rate_limit(tmp_path: Path) -> None:
    from seam.apps.web.keys import KeyStore

    config = WebSection(rate_limit=100, tenant_rate_limit=5, heartbeat_seconds=1)
    async with serving(ScriptedModel([]), tmp_path, config=config) as served:
        served.keys["alpha-2"] = KeyStore(tmp_path / "keys.json").create("key-alpha-2", "alpha")
        async with (
            served.client("alpha") as first_key,
            served.client("alpha-2") as second_key,
            served.client("beta") as beta,
        ):
            for client in (first_key, second_key, first_key, second_key, first_key):
                assert (await client.get("/api/sessions")).status_code == 200
            refused = await second_key.get("/api/sessions")
            assert refused.status_code == 429 and "Retry-After" in refused.headers
            assert "tenant alpha" in refused.json()["error"]["message"]
            assert (await beta.get("/api/sessions")).status_code == 200  # another tenant
