"""`network = true`: public egress through the filtering proxy, never the host's loopback
or private ranges.

Tests only ever connect to 127.0.0.0/8: the private ranges are proven refused by the
guard's decision (`destination_refusal`) and by the real proxy with a resolver that
answers a private address (refused before any connection is tried); the real path, from
inside bubblewrap, is proven with a listener on the host's 127.0.0.1, unreachable by
default and reachable only when the test puts 127.0.0.1 on the allow list.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from seam.contracts.addresses import destination_refusal
from seam.contracts.storage import Reach
from seam.services.sandbox.bwrap import DEFAULT_BWRAP, BwrapSandboxProvider, bwrap_available
from seam.services.sandbox.egress import PROXY_PORT, EgressProxy
from seam.services.sandbox.process import SandboxOptions
from tests.services.test_sandbox_local import TEST_PATH

BWRAP = Path(DEFAULT_BWRAP).exists() and bwrap_available()
needs_bwrap = pytest.mark.skipif(not BWRAP, reason="bubblewrap is missing (scripts/ensure-bwrap)")
needs_curl = pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
PYTHON = os.path.realpath(sys.executable)


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.5.4",
        "192.168.1.1",
        "169.254.169.254",  # cloud metadata
        "100.64.0.1",  # CGNAT
        "0.0.0.0",
        "224.0.0.1",
        "240.0.0.1",
        "::1",
        "fc00::1",
        "fd12:3456::1",
        "fe80::1",
        "::ffff:10.0.0.1",
        "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
    ],
)
def test_private_loopback_and_reserved_destinations_are_refused(address: str) -> None:
    reason = destination_refusal("example.org", 443, [address])
    assert reason is not None and address in reason
    assert destination_refusal("example.org", 443, ["93.184.215.14", address]) is not None
    assert destination_refusal("example.org", 443, [address], {"example.org"}) is None
    assert destination_refusal("example.org", 443, [address], {"example.org:443"}) is None
    assert destination_refusal("example.org", 80, [address], {"example.org:443"}) is not None


def test_public_addresses_and_local_names() -> None:
    assert destination_refusal("example.org", 443, ["93.184.215.14"]) is None
    assert (
        destination_refusal("example.org", 443, ["2606:2800:21f:cb07:6820:80da:af6b:8b2c"]) is None
    )
    assert "local host name" in str(destination_refusal("localhost", 80, ["93.184.215.14"]))
    assert "no address" in str(destination_refusal("nowhere.example", 80, []))


async def ask(socket_path: str, request: bytes) -> bytes:
    reader, writer = await asyncio.open_unix_connection(socket_path)
    writer.write(request)
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    return data


async def test_the_proxy_refuses_a_name_resolving_to_a_private_address() -> None:
    tried: list[tuple[str, int]] = []

    async def resolve(host: str, port: int) -> list[str]:
        tried.append((host, port))
        return ["10.20.30.40"]

    proxy = EgressProxy(resolve=resolve)
    path = await proxy.start()
    try:
        answer = await ask(path, b"CONNECT internal.example:443 HTTP/1.1\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 403 ")
        assert b"internal.example resolves to 10.20.30.40, a private address" in answer
        answer = await ask(path, b"GET http://internal.example/x HTTP/1.1\r\nHost: a\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 403 ")
        answer = await ask(path, b"GET /relative HTTP/1.1\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 400 ")
        assert tried == [("internal.example", 443), ("internal.example", 80)]
    finally:
        await proxy.aclose()
    assert not Path(path).exists()


@pytest.fixture
async def web() -> AsyncIterator[int]:
    """An HTTP/1.0 server on the host's 127.0.0.1 that answers every request."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.0 200 OK\r\nContent-Length: 15\r\n\r\nhello from host")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()


def fetch(port: int, *flags: str) -> str:
    return f"curl -sS -m 5 {' '.join(flags)} http://127.0.0.1:{port}/; echo exit=$?"


@needs_bwrap
@needs_curl
async def test_a_host_loopback_listener_is_out_of_reach_unless_allowed(
    tmp_path: Path, web: int
) -> None:
    reach = Reach(read=(str(tmp_path), os.path.dirname(os.path.dirname(PYTHON))))
    options = SandboxOptions(kill_grace=0.5)
    refused = BwrapSandboxProvider(base_env={"PATH": TEST_PATH}, options=options)
    sandbox = refused.for_session("s", working_dir=str(tmp_path), network=True, reach=reach)
    result = await sandbox.run(f"env | grep -i ^https_proxy; {fetch(web)}")
    assert f"HTTPS_PROXY=http://127.0.0.1:{PROXY_PORT}" in result.output
    assert "127.0.0.1 is a loopback address" in result.output
    assert "hello from host" not in result.output
    direct = await sandbox.run(fetch(web, "--noproxy '*'"))  # the sandbox's own loopback
    assert "hello from host" not in direct.output and "exit=7" in direct.output
    tunnel = await sandbox.run(fetch(web, "--proxytunnel"))
    assert "hello from host" not in tunnel.output
    await refused.aclose()

    allowed = BwrapSandboxProvider(
        base_env={"PATH": TEST_PATH}, options=options, network_allow=("127.0.0.1",)
    )
    sandbox = allowed.for_session("s", working_dir=str(tmp_path), network=True, reach=reach)
    result = await sandbox.run(fetch(web))
    assert result.output == "hello from hostexit=0\n"
    tunnel = await sandbox.run(fetch(web, "--proxytunnel"))
    assert tunnel.output == "hello from hostexit=0\n"
    closed = allowed.for_session("s", working_dir=str(tmp_path), network=False, reach=reach)
    offline = await closed.run(fetch(web))
    assert "hello from host" not in offline.output and "exit=0" not in offline.output
    await allowed.aclose()
