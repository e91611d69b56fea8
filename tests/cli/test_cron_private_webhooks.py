"""Webhook deliveries to non-public addresses are refused, and `seam cron runs` says why.

A cron job's target is text a model may have written, so a delivery to loopback, cloud
metadata (link-local) or a private network is refused for good, on the first attempt,
unless `[network] allow_private` lists it. Real parts: the CLI in process, real SQLite,
a real HTTP listener on loopback that must record nothing, the real deliverer.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from seam.contracts.outbox import OutboxItem
from tests.cli.conftest import Cli
from tests.support.openai_server import OpenAIServer, text_reply

pytestmark = pytest.mark.in_process


class _Listener(ThreadingHTTPServer):
    posts: list[bytes]


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        assert isinstance(self.server, _Listener)
        self.server.posts.append(self.rfile.read(length))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def listener() -> Iterator[_Listener]:
    server = _Listener(("127.0.0.1", 0), _Handler)
    server.posts = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _loopback_name() -> str:
    """This machine's own name when it resolves to loopback (it usually does)."""
    name = socket.gethostname()
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(name, 80)}
    except OSError:
        addresses = set()
    if not addresses or not all(str(a).startswith("127.") for a in addresses):
        pytest.skip(f"{name} does not resolve to loopback here")
    return name


def deliver_once(cli: Cli) -> OutboxItem:
    """Run the real deliverer over the CLI's home until the queued item settles."""
    from seam.wiring import create_runtime
    from seam.wiring.outbox import running_deliverer
    from seam.wiring.settings import load_settings

    async def go() -> OutboxItem:
        settings = load_settings(cli.env, home=cli.home, working_dir=cli.project)
        settled: asyncio.Queue[OutboxItem] = asyncio.Queue()
        async with (
            create_runtime(settings=settings) as runtime,
            running_deliverer(settings, runtime.store, on_result=settled.put_nowait),
        ):
            return await asyncio.wait_for(settled.get(), 20)

    return asyncio.run(go())


def run_job(cli: Cli, openai_server: OpenAIServer, target: str) -> str:
    openai_server.push(text_reply("All quiet."))
    added = cli("cron", "add", "--every", "1d", "report", "--deliver", target)
    assert added.returncode == 0, added.stderr
    job = added.stdout.strip()
    ran = cli("cron", "run", job)
    assert ran.returncode == 0, ran.stderr
    return job


@pytest.mark.parametrize(
    ("host", "reason"),
    [
        ("127.0.0.1", "127.0.0.1 is a loopback address"),
        ("169.254.169.254", "169.254.169.254 is a link-local address"),
        ("10.0.0.1", "10.0.0.1 is a private address"),
        ("localhost", "localhost is a local host name"),
        ("[::ffff:127.0.0.1]", "embedding 127.0.0.1, a loopback address"),
        ("own-name", "resolves to 127."),
    ],
)
def test_a_webhook_to_a_private_address_is_refused(
    cli: Cli, openai_server: OpenAIServer, listener: _Listener, host: str, reason: str
) -> None:
    host = _loopback_name() if host == "own-name" else host
    port = listener.server_address[1]
    job = run_job(cli, openai_server, f"http://{host}:{port}/hook")
    item = deliver_once(cli)
    assert item.status == "failed" and item.attempts == 1  # for good, not retried
    assert listener.posts == []
    runs = cli("cron", "runs", job)
    assert runs.returncode == 0, runs.stderr
    [line] = runs.stdout.splitlines()
    assert "delivery failed" in line and "refused" in line and reason in line
    assert "allow_private" in line, line


def test_a_webhook_listed_in_allow_private_is_delivered(
    cli: Cli, openai_server: OpenAIServer, listener: _Listener
) -> None:
    cli.write_config('[network]\nallow_private = ["127.0.0.0/8"]\n')
    port = listener.server_address[1]
    job = run_job(cli, openai_server, f"http://127.0.0.1:{port}/hook")
    item = deliver_once(cli)
    assert item.status == "sent"
    assert len(listener.posts) == 1 and b"All quiet." in listener.posts[0]
    runs = cli("cron", "runs", job)
    assert runs.returncode == 0 and "delivery failed" not in runs.stdout, runs.stdout
