"""What the web surface adds to a turn, with many clients streaming at once.

N concurrent SSE clients (default 1,000), each with its own session: open the session's
event stream, POST one message, read until `done`. The server is `seam serve`'s app in a
process of its own (SQLite store), on a model that waits 1 s and then streams two chunks,
the last one carrying the time it was sent. Reported:

- added latency from the POST to the first `text_delta` on the stream (minus the 1 s),
- from the model's last chunk to the `done` event on the stream,
- the server's memory per open stream (RSS with every stream open, less before).

    .venv/bin/python bench/web.py [--clients 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

SERVER = r"""
import asyncio, socket, sys, time
from collections.abc import AsyncIterator
import uvicorn
from seam.apps.web.app import create_app
from seam.apps.web.auth import Authenticator
from seam.contracts.messages import Usage
from seam.contracts.model import DoneChunk, ModelCapabilities, TextChunk, UsageChunk
from seam.services.sessions.sqlite import SQLiteSessionStore
from seam.wiring.runtime import assemble_runtime
from seam.wiring.web import WebBackend
from seam.wiring.web_keys import KeyStore, WebSection


class SlowModel:
    name = "bench"
    model = "bench-1s"
    max_context_tokens = 128_000
    capabilities = ModelCapabilities()

    def count_tokens(self, text):
        return len(text) // 4

    async def aclose(self):
        pass

    async def stream(self, request) -> AsyncIterator:
        await asyncio.sleep(1.0)
        yield TextChunk("hello ")
        yield TextChunk(f"@{time.time():.6f}")
        yield UsageChunk(Usage(input_tokens=10, output_tokens=2))
        yield DoneChunk("stop")


async def main():
    folder = sys.argv[1]
    store = SQLiteSessionStore(folder + "/sessions.db")
    runtime = assemble_runtime(model=SlowModel(), store=store, tools=None)
    config = WebSection(rate_limit=1_000_000, heartbeat_seconds=30)
    backend = WebBackend(runtime, config)
    keys = KeyStore(__import__("pathlib").Path(folder) / "keys.json")
    key = keys.create("bench")
    app = create_app(backend, Authenticator(keys, b"b" * 32, "t", "local"))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(4096)
    print(sock.getsockname()[1], key, flush=True)
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", lifespan="on", backlog=4096)
    )
    await server.serve(sockets=[sock])


asyncio.run(main())
"""


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def one(
    client: httpx.AsyncClient,
    name: str,
    ready: asyncio.Event,
    go: asyncio.Event,
    connected: list[int],
    out: dict[str, list[float]],
) -> None:
    await client.post("/api/sessions", json={"name": name})
    async with client.stream("GET", f"/api/sessions/{name}/events") as response:
        lines = response.aiter_lines()
        await anext(lines)  # the retry line: the stream is open
        connected.append(1)
        if len(connected) == out["n"][0]:
            ready.set()
        await go.wait()
        posted = time.time()
        post = asyncio.ensure_future(
            client.post(f"/api/sessions/{name}/messages", json={"text": "hi"})
        )
        event = None
        first = None
        last_chunk = None
        async for line in lines:
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data = json.loads(line[6:])
                if event == "text_delta" and first is None:
                    first = time.time()
                if event == "text_delta" and data["text"].startswith("@"):
                    last_chunk = float(data["text"][1:])
                if event == "done":
                    done = time.time()
                    break
        await post
    out["first"].append((first - posted - 1.0) * 1000)
    out["done"].append((done - last_chunk) * 1000)


async def run(clients: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        proc = subprocess.Popen(  # noqa: ASYNC220 (started once, before any client)
            [sys.executable, "-c", SERVER, folder],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "SEAM_HOME": folder},
        )
        try:
            port, key = proc.stdout.readline().split()
            limits = httpx.Limits(
                max_connections=clients * 2 + 10, max_keepalive_connections=clients * 2
            )
            async with httpx.AsyncClient(
                base_url=f"http://127.0.0.1:{port}",
                limits=limits,
                headers={"Authorization": f"Bearer {key}"},
                timeout=httpx.Timeout(300),
            ) as client:
                await client.get("/healthz")
                base = rss_kb(proc.pid)
                ready, go = asyncio.Event(), asyncio.Event()
                out: dict[str, list[float]] = {"first": [], "done": [], "n": [clients]}
                connected: list[int] = []
                tasks = [
                    asyncio.ensure_future(one(client, f"b{i}", ready, go, connected, out))
                    for i in range(clients)
                ]
                await ready.wait()
                peak = rss_kb(proc.pid)
                go.set()
                await asyncio.gather(*tasks)
            per_stream = (peak - base) / clients
            print(f"clients: {clients}")
            print(
                f"POST -> first text_delta, added: p50 {pct(out['first'], 0.5):.1f} ms, "
                f"p99 {pct(out['first'], 0.99):.1f} ms"
            )
            print(
                f"last model chunk -> done: p50 {pct(out['done'], 0.5):.1f} ms, "
                f"p99 {pct(out['done'], 0.99):.1f} ms"
            )
            print(
                f"server RSS: {base / 1024:.1f} MB idle, {peak / 1024:.1f} MB with every "
                f"stream open: {per_stream:.1f} KB per open stream"
            )
            print(f"mean added to first delta {statistics.mean(out['first']):.1f} ms")
        finally:
            proc.terminate()
            proc.wait(timeout=30)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=1000)
    asyncio.run(run(parser.parse_args().clients))
