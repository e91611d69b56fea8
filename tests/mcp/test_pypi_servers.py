"""The MCP client against PyPI's mcp-server-time and mcp-server-fetch (real servers).

mcp-server-fetch fetches a page from an HTTP server on loopback (it reads robots.txt
first, as it does for any site), and offers its `fetch` prompt as a chat command.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from seam.core.scripted_model import call, tool_step
from seam.plugins.mcp.prompts import parse_command
from seam.plugins.mcp.servers import McpServers
from tests.mcp.installed import fetch_server, time_server
from tests.plugins.test_mcp import ends, runtime_with, turn

PAGE = b"<html><head><title>Notes</title></head><body><h1>Shopping</h1><p>Buy oat milk.</p></body>"


class Site(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body, kind = (b"User-agent: *\nAllow: /\n", "text/plain")
        if self.path != "/robots.txt":
            body, kind = PAGE, "text/html"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Site)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/notes"
    finally:
        server.shutdown()
        server.server_close()


async def test_mcp_server_time_answers_the_model() -> None:
    servers = McpServers([time_server()])
    runtime, model = runtime_with(
        servers,
        tool_step(call("mcp__time__get_current_time", timezone="Europe/Paris")),
        tool_step(call("mcp__time__get_current_time", timezone="Mars/Olympus")),
    )
    async with runtime:
        paris, bad = ends(await turn(runtime))
    assert "mcp__time__convert_time" in {tool.name for tool in model.requests[0].tools}
    assert json.loads(paris.result)["timezone"] == "Europe/Paris"
    assert bad.is_error and "Mars/Olympus" in bad.result


async def test_mcp_server_fetch_reads_a_page_and_offers_its_prompt(site: str) -> None:
    servers = McpServers([fetch_server()])
    runtime, _ = runtime_with(servers, tool_step(call("mcp__fetch__fetch", url=site)))
    async with runtime:
        [end] = ends(await turn(runtime))
        text = await servers.prompt(parse_command("/fetch:fetch", site))
    assert not end.is_error, end.result
    assert "Buy oat milk." in end.result
    assert "Buy oat milk." in text
