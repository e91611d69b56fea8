"""What the web surface adds to a turn, with many clients streaming at once.

N concurrent SSE clients (default 1,000), each with its own session (created first): open
the session's event stream (all at once), POST one message, read until `done`. The server
is `seam serve`'s app in a process of its own (SQLite store, `seam serve`'s uvicorn
settings), on a model that waits 1 s and then streams two chunks, the last one carrying
the time it was sent. Reported:

- from opening a stream to its first event (the streams opened at once), and the
  server's CPU per stream opened (steadier than the latency on a shared machine),
- added latency from the POST to the first `text_delta` on the stream (minus the 1 s),
- from the model's last chunk to the `done` event on the stream,
- the server's memory per open stream (RSS with every stream open, less before),
- the bench client's own CPU per stream opened (`web_client.py` says why it is lean).

    .venv/bin/python bench/web.py [--clients 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from web_client import EventStream, Http

SERVER = r"""
import asyncio, os, socket, sys, time
from collections.abc import AsyncIterator
import uvicorn
from seam.apps.web.app import create_app
from seam.apps.web.auth import Authenticator
from seam.contracts.messages import Usage
from seam.contracts.model import DoneChunk, ModelCapabilities, TextChunk, UsageChunk
from seam.services.sessions.sqlite import SQLiteSessionStore
from seam.wiring import assemble_runtime
from seam.apps.web.backend import WebBackend
from seam.apps.web.keys import KeyStore
from seam.wiring.web_keys import WebSection


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
    if os.environ.get("BENCH_SLOW_CALLBACKS"):  # log every callback that holds the loop
        import logging
        logging.basicConfig(level=logging.WARNING)
        loop = asyncio.get_running_loop()
        loop.set_debug(True)
        loop.slow_callback_duration = float(os.environ["BENCH_SLOW_CALLBACKS"])
    folder = sys.argv[1]
    store = SQLiteSessionStore(folder + "/sessions.db")
    runtime = assemble_runtime(model=SlowModel(), store=store, tools=None)
    config = WebSection(rate_limit=1_000_000, tenant_rate_limit=1_000_000, heartbeat_seconds=30)
    backend = WebBackend(runtime, config)
    keys = KeyStore(__import__("pathlib").Path(folder) / "keys.json")
    key = keys.create("bench")
    app = create_app(backend, Authenticator(keys, b"b" * 32, "t", "local"))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(4096)
    print(sock.getsockname()[1], key, flush=True)
    from seam.apps.web.serve import server_config
    settings = server_config(app, "127.0.0.1", 0, config)  # seam serve's protocol and timeouts
    settings.timeout_graceful_shutdown = 5  # open streams do not hold the stop up
    settings.backlog = 4096
    if os.environ.get("BENCH_HTTP"):  # h11 or httptools: uvicorn's own, no head deadline
        settings.http = os.environ["BENCH_HTTP"]
    server = uvicorn.Server(settings)
    lags = []
    pauses = []  # garbage collections, in seconds
    import gc
    began = [0.0]

    def on_gc(phase, info):
        if phase == "start":
            began[0] = time.perf_counter()
        else:
            pauses.append(time.perf_counter() - began[0])
            with open(folder + "/gc.txt", "w") as out:
                out.write(f"{len(pauses)} {sum(pauses):.4f} {max(pauses):.4f}")

    gc.callbacks.append(on_gc)

    async def tick():  # how late the event loop runs a 10 ms timer: how long it is held
        while True:
            start = time.perf_counter()
            await asyncio.sleep(0.01)
            lags.append(time.perf_counter() - start - 0.01)
            if len(lags) % 100 == 0:  # the client reads it after the turns (see run)
                with open(folder + "/lags.txt", "w") as out:
                    out.write(" ".join(f"{v:.5f}" for v in lags))

    if os.environ.get("BENCH_GC") != "default":
        from seam.apps.web.serve import tune_gc
        tune_gc()
    ticker = asyncio.ensure_future(tick())
    await server.serve(sockets=[sock])
    ticker.cancel()


if os.environ.get("BENCH_PROFILE"):  # a cProfile of the server: SIGUSR2 on, SIGUSR1 off + dump
    import cProfile, signal
    prof = cProfile.Profile(time.thread_time)  # CPU of the event loop thread, not wall time

    def dump(*_):
        prof.disable()
        prof.dump_stats(os.environ["BENCH_PROFILE"])

    signal.signal(signal.SIGUSR1, dump)
    signal.signal(signal.SIGUSR2, lambda *_: prof.enable())
asyncio.run(main())
"""


def stop(proc: subprocess.Popen[str]) -> None:
    """SIGTERM (uvicorn closes the open streams, waiting at most 5 s for them), then
    SIGKILL if the server is still there 15 s later: the bench always ends."""
    proc.terminate()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=15)
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_cpu(pid: int) -> dict[str, float]:
    """CPU seconds by thread name: the event loop ("python") and the store's threads."""
    out: dict[str, float] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        seconds = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        kind = "event loop" if int(task.name) == pid else "other threads"
        out[kind] = out.get(kind, 0.0) + seconds
    return out


def runqueue_wait(pid: int) -> float:
    """Seconds the event loop thread has spent ready to run but waiting for a CPU (the
    kernel's schedstat): what other processes on the machine cost the server."""
    return int(Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[1]) / 1e9


def read_lags(folder: str) -> list[float]:
    try:
        return [float(v) * 1000 for v in Path(folder, "lags.txt").read_text().split()]
    except (FileNotFoundError, ValueError):
        return []


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def one(
    http: Http,
    stream: EventStream,
    name: str,
    delay: float,
    go: asyncio.Event,
    out: dict[str, list[float]],
) -> None:
    """Post one message to `name` once `go` is set and `delay` has passed, and read the
    session's stream (opened already) until the turn's `done`."""
    try:
        await go.wait()
        await asyncio.sleep(delay)
        posted = time.time()
        post = asyncio.ensure_future(
            http.request("POST", f"/api/sessions/{name}/messages", {"text": "hi"})
        )
        done = await stream.done
    finally:
        stream.close()
    assert await post == 202
    first, last_chunk = stream.first_delta, stream.last_chunk
    assert first is not None and last_chunk is not None
    out["first"].append((first - posted - 1.0) * 1000)
    out["done"].append((done - last_chunk) * 1000)


async def create_sessions(http: Http, clients: int) -> None:
    """The clients' sessions, 50 requests at a time."""
    gate = asyncio.Semaphore(50)

    async def create(name: str) -> None:
        async with gate:
            assert await http.request("POST", "/api/sessions", {"name": name}) == 201

    await asyncio.gather(*(create(f"b{i}") for i in range(clients)))


async def run(clients: int, spread: float) -> None:
    with tempfile.TemporaryDirectory() as folder:
        proc = subprocess.Popen(  # noqa: ASYNC220 (started once, before any client)
            [sys.executable, "-c", SERVER, folder],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "SEAM_HOME": folder},
        )
        tasks: list[asyncio.Future[None]] = []
        profile = None
        try:
            assert proc.stdout is not None
            port, key = proc.stdout.readline().split()
            http = Http(int(port), key)
            await http.request("GET", "/healthz")
            base = rss_kb(proc.pid)
            go = asyncio.Event()
            out: dict[str, list[float]] = {"first": [], "done": []}
            await create_sessions(http, clients)  # first, so the streams open at once
            if os.environ.get("BENCH_PROFILE"):  # which phase: "open" (the streams) or "turns"
                profile = os.environ.get("BENCH_PROFILE_PHASE", "turns")
            if profile == "open":
                proc.send_signal(signal.SIGUSR2)  # profile the streams' opening only
            opening = cpu_seconds(proc.pid), thread_cpu(proc.pid)
            client_opening = time.process_time()
            names = [f"b{i}" for i in range(clients)]
            streams = await http.streams([f"/api/sessions/{n}/events" for n in names])
            out["open"] = [(await s.opened - s.started) * 1000 for s in streams]
            # The messages are sent at even intervals over `spread` seconds (0: all at once).
            tasks += [
                asyncio.ensure_future(one(http, s, n, spread * i / clients, go, out))
                for i, (s, n) in enumerate(zip(streams, names, strict=True))
            ]
            peak = rss_kb(proc.pid)
            if profile == "open":
                proc.send_signal(signal.SIGUSR1)
            opened_cpu = cpu_seconds(proc.pid) - opening[0]
            client_cpu = time.process_time() - client_opening
            opened_loop = thread_cpu(proc.pid)["event loop"] - opening[1]["event loop"]
            lags_before = len(read_lags(folder))
            waited_before = runqueue_wait(proc.pid)
            cpu_before = cpu_seconds(proc.pid)
            threads_before = thread_cpu(proc.pid)
            if profile == "turns":
                proc.send_signal(signal.SIGUSR2)  # profile the turns only
            go.set()
            await asyncio.gather(*tasks)
            cpu = cpu_seconds(proc.pid) - cpu_before
            waited = runqueue_wait(proc.pid) - waited_before
            threads = {k: v - threads_before.get(k, 0.0) for k, v in thread_cpu(proc.pid).items()}
            per_stream = (peak - base) / clients
            print(f"{clients} clients, messages sent over {spread:g} s")
            print(
                f"stream opened -> first event: p50 {pct(out['open'], 0.5):.1f} ms, "
                f"p99 {pct(out['open'], 0.99):.1f} ms"
            )
            print(
                f"server CPU per stream opened: {opened_cpu / clients * 1000:.2f} ms "
                f"(event loop {opened_loop / clients * 1000:.2f} ms)"
            )
            print(f"bench client CPU per stream opened: {client_cpu / clients * 1000:.2f} ms")
            print(
                f"POST -> first text_delta, added: p50 {pct(out['first'], 0.5):.1f} ms, "
                f"p99 {pct(out['first'], 0.99):.1f} ms"
            )
            print(
                f"last model chunk -> done: p50 {pct(out['done'], 0.5):.1f} ms, "
                f"p99 {pct(out['done'], 0.99):.1f} ms"
            )
            slow = sorted(v for v in out["first"] if v > 1000)
            if slow:
                shown = ", ".join(f"{v:.0f}" for v in slow[:10])
                print(f"{len(slow)} first deltas over 1 s late: {shown} ms")
            print(
                f"server RSS: {base / 1024:.1f} MB idle, {peak / 1024:.1f} MB with every "
                f"stream open: {per_stream:.1f} KB per open stream"
            )
            split = ", ".join(
                f"{k} {v / clients * 1000:.1f} ms" for k, v in sorted(threads.items())
            )
            print(f"server CPU per turn: {cpu / clients * 1000:.1f} ms ({split})")
            print(
                f"event loop thread waiting for a CPU (other processes' load): {waited:.2f} s "
                f"({waited / clients * 1000:.1f} ms per turn)"
            )
            with contextlib.suppress(FileNotFoundError, ValueError):
                count, total, worst = Path(folder, "gc.txt").read_text().split()  # noqa: ASYNC240
                print(
                    f"garbage collections (whole run): {count}, {float(total) * 1000:.0f} ms "
                    f"in all, the longest {float(worst) * 1000:.0f} ms"
                )
            lags = sorted(read_lags(folder)[lags_before:])
            if lags:
                print(
                    f"event loop lag (a 10 ms timer, while the turns ran): p50 "
                    f"{pct(lags, 0.5):.1f} ms, p99 {pct(lags, 0.99):.1f} ms, max {lags[-1]:.1f} ms"
                )
        finally:
            for task in tasks:  # a failed run's clients close their streams
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if profile == "turns":
                proc.send_signal(signal.SIGUSR1)
                await asyncio.sleep(3)
            stop(proc)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument(
        "--spread", type=float, default=0.0, help="seconds over which the messages are sent"
    )
    args = parser.parse_args()
    asyncio.run(run(args.clients, args.spread))
