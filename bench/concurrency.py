"""Many sessions in one process: the latency the framework adds to each turn.

Every turn goes through `Runtime.ask` (submission, claim, the turn, its transcript and
event log, settlement) over a real store. The model is scripted and slow on purpose: it
waits `--latency` ms before each of its two responses (a tool call, then a 50-delta
answer), which is the time a real model would take. What the framework adds is the
turn's wall time minus that model time. Two loads, each on the in-memory store and on
SQLite (a file in a temp dir):

- steady: `--rate` turns per second spread over 1,000 sessions for `--duration` seconds;
- burst: `--burst` turns (one per session) started at once.

Both run with the garbage collector tuned as `seam serve`, the process that holds such
sessions, tunes it (`--gc default`: CPython's). Under CPython's a burst spends a fifth
to a third of its time in collections, each holding the GIL, so the store's writer
thread waits behind them too.

Besides the added latency it reports the process's CPU time (all threads; steadier than
wall time on a busy machine) and the event loop's lag (how late a 10 ms ticker wakes up),
which is what every other session in the process feels while a store call blocks. Each
line adds the event loop thread's own CPU (`loop cpu`; the rest of `cpu` is the store's
threads); BENCH_PROFILE=FILE writes a cProfile of that thread's CPU over the measured run
(the last one run, with several cases: pick one with `--store` and `--case`).

    .venv/bin/python bench/concurrency.py [--rate 100] [--latency 50] [--duration 20]
        [--burst 1000] [--store memory|sqlite|both] [--case steady|burst|both]
        [--gc server|default]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import gc
import os
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

# Run as a script, this folder is on sys.path: the same cheap in-process tool as loop_overhead.py.
from loop_overhead import EchoTool

from seam.contracts.execution import ExecutionStore
from seam.contracts.messages import ToolCall, Usage
from seam.contracts.model import (
    DoneChunk,
    ModelCapabilities,
    ModelChunk,
    ModelRequest,
    TextChunk,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageChunk,
)
from seam.contracts.personality import Personality
from seam.core import DefaultToolRegistry, InMemoryExecutionStore, StaticPersonalityRegistry
from seam.wiring import Runtime, create_runtime

SESSIONS = 1000
DELTAS = 50
TICK = 0.01


class SlowModel:
    """Waits `latency` seconds, then answers: a tool call first, text once it has the
    result. It decides from the request, so any number of sessions can share it."""

    name = "bench"
    model = "bench-model"
    max_context_tokens = 128_000
    capabilities = ModelCapabilities()

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.calls = 0

    def count_tokens(self, text: str) -> int:
        return (len(text) + 3) // 4

    async def aclose(self) -> None:
        return None

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        self.calls += 1
        await asyncio.sleep(self.latency)
        usage = UsageChunk(Usage(input_tokens=100, output_tokens=20))
        if request.messages and request.messages[-1].role == "tool":
            for _ in range(DELTAS):
                yield TextChunk("tok ")
            yield usage
            yield DoneChunk("stop")
            return
        call = ToolCall(id=f"call_{self.calls}", name="echo", arguments='{"text": "hi"}')
        yield ToolCallStart(0, call.id, call.name)
        yield ToolCallDelta(0, call.arguments)
        yield ToolCallEnd(0, call)
        yield usage
        yield DoneChunk("tool_calls")


def build(store: ExecutionStore, latency: float) -> Runtime:
    tools = DefaultToolRegistry()
    tools.register_tool(EchoTool())
    personalities = StaticPersonalityRegistry(
        [Personality(id="default", soul="You are a benchmark.", toolset=("echo",))]
    )
    return create_runtime(
        model=SlowModel(latency), store=store, tools=tools, personalities=personalities
    )


@contextlib.contextmanager
def open_store(kind: str) -> Iterator[ExecutionStore]:
    if kind == "memory":
        yield InMemoryExecutionStore()
        return
    from seam.services.sessions.sqlite import SQLiteSessionStore

    with tempfile.TemporaryDirectory() as tmp:
        yield SQLiteSessionStore(str(Path(tmp) / "sessions.db"))


class LagMeter:
    """How late a ticker wakes up: the event loop's responsiveness under load."""

    def __init__(self) -> None:
        self.lags: list[float] = []
        self._task: asyncio.Task[None] | None = None

    async def _tick(self) -> None:
        while True:
            start = time.perf_counter()
            await asyncio.sleep(TICK)
            self.lags.append(time.perf_counter() - start - TICK)

    def __enter__(self) -> LagMeter:
        self._task = asyncio.ensure_future(self._tick())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()


async def one_turn(rt: Runtime, name: str, model_time: float) -> float:
    """Added latency (seconds) of one durable turn."""
    events = 0

    def consume(event: object) -> None:
        nonlocal events
        events += 1

    start = time.perf_counter()
    sub = await rt.ask(name, "go", on_event=consume)
    elapsed = time.perf_counter() - start
    if sub.outcome != "completed":
        raise RuntimeError(f"turn in {name} ended {sub.outcome}: {sub.error}")
    return elapsed - model_time


async def prepare(rt: Runtime) -> list[str]:
    """Create the sessions up front: the measured turns find them stored, as a running
    surface's do."""
    names = [f"s{n}" for n in range(SESSIONS)]
    for name in names:
        await rt.get_session(rt.session_key_for(name))
    return names


async def steady(rt: Runtime, rate: float, duration: float, model_time: float) -> dict[str, Any]:
    names = await prepare(rt)
    total = int(rate * duration)
    tasks: list[asyncio.Task[float]] = []
    with LagMeter() as lag, profiled() as loop_cpu:
        cpu = time.process_time()
        start = time.perf_counter()
        for i in range(total):
            due = start + i / rate
            pause = due - time.perf_counter()
            if pause > 0:
                await asyncio.sleep(pause)
            tasks.append(asyncio.ensure_future(one_turn(rt, names[i % SESSIONS], model_time)))
        added = await asyncio.gather(*tasks)
        wall = time.perf_counter() - start
        cpu = time.process_time() - cpu
    return {
        "turns": total,
        "wall": wall,
        "cpu": cpu,
        "added": added,
        "lag": lag.lags,
        "loop_cpu": loop_cpu[0],
    }


@contextlib.contextmanager
def gc_policy(name: str) -> Iterator[None]:
    """The garbage collector as the process holding these sessions runs it. "server" is
    `seam serve`'s (`tune_gc`: what exists once it is up frozen out of collections, the
    young generation collected less often); "default" is CPython's, under which an
    old-generation pass walks every live session's objects, holding the loop for tens of
    ms. Restored on exit: each case starts from CPython's default and tunes it afresh."""
    if name != "server":
        yield
        return
    from seam.apps.web.serve import tune_gc

    thresholds = gc.get_threshold()
    tune_gc()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


@contextlib.contextmanager
def profiled() -> Iterator[list[float]]:
    """The event loop thread's CPU seconds over the block (set on exit; the rest of `cpu`
    is the store's threads), and with BENCH_PROFILE=FILE a cProfile of that thread's CPU
    (which the session's first turn, every turn here, spends on what)."""
    out = [0.0]
    path = os.environ.get("BENCH_PROFILE")
    prof = cProfile.Profile(time.thread_time) if path else None
    start = time.thread_time()
    if prof is not None:
        prof.enable()
    try:
        yield out
    finally:
        out[0] = time.thread_time() - start
        if prof is not None and path:
            prof.disable()
            prof.dump_stats(path)


async def burst(rt: Runtime, count: int, model_time: float) -> dict[str, Any]:
    names = await prepare(rt)
    with LagMeter() as lag, profiled() as loop_cpu:
        cpu = time.process_time()
        start = time.perf_counter()
        added = await asyncio.gather(
            *(one_turn(rt, names[i % SESSIONS], model_time) for i in range(count))
        )
        wall = time.perf_counter() - start
        cpu = time.process_time() - cpu
    return {
        "turns": count,
        "wall": wall,
        "cpu": cpu,
        "added": added,
        "lag": lag.lags,
        "loop_cpu": loop_cpu[0],
    }


def pct(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))] * 1000 if ordered else 0.0


def report(label: str, result: dict[str, Any]) -> None:
    added = result["added"]
    lag = result["lag"]
    print(
        f"  {label:<14} {result['turns']:>5} turns  wall {result['wall']:6.2f} s"
        f"  cpu {result['cpu']:6.2f} s   added p50 {statistics.median(added) * 1000:7.1f} ms"
        f"  p99 {pct(added, 0.99):7.1f} ms"
        f"   loop lag p99 {pct(lag, 0.99):7.1f} ms  max {max(lag, default=0) * 1000:7.1f} ms"
        + (f"   loop cpu {result['loop_cpu']:5.2f} s" if "loop_cpu" in result else "")
    )


async def run_case(kind: str, case: str, args: argparse.Namespace) -> None:
    latency = args.latency / 1000
    model_time = 2 * latency  # two model responses per turn
    with open_store(kind) as store:
        rt = build(store, latency)
        try:
            gc.collect()
            if case == "steady":
                # Tuned as `seam serve` tunes it once it is up: before the sessions exist.
                with gc_policy(args.gc):
                    result = await steady(rt, args.rate, args.duration, model_time)
                report(f"{kind} steady", result)
            else:
                with gc_policy(args.gc):
                    result = await burst(rt, args.burst, model_time)
                report(f"{kind} burst", result)
        finally:
            await rt.aclose()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=100.0, help="steady turns per second")
    parser.add_argument("--latency", type=float, default=50.0, help="model ms per response")
    parser.add_argument("--duration", type=float, default=20.0, help="steady seconds")
    parser.add_argument("--burst", type=int, default=1000, help="turns started at once")
    parser.add_argument("--store", choices=("memory", "sqlite", "both"), default="both")
    parser.add_argument("--case", choices=("steady", "burst", "both"), default="both")
    parser.add_argument(
        "--gc", choices=("server", "default"), default="server", help="the collector"
    )
    args = parser.parse_args()
    stores = ("memory", "sqlite") if args.store == "both" else (args.store,)
    cases = ("steady", "burst") if args.case == "both" else (args.case,)
    print(
        f"{SESSIONS} sessions, model {args.latency:g} ms per response (x2 per turn), "
        f"1 tool call + {DELTAS} deltas per turn; steady {args.rate:g}/s for "
        f"{args.duration:g} s, burst {args.burst} (collector: {args.gc})"
    )
    for case in cases:
        for kind in stores:
            await run_case(kind, case, args)


if __name__ == "__main__":
    asyncio.run(main())
