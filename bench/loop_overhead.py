"""Framework CPU time per agent turn.

The turn: a scripted model asks for 3 tool calls (trivial, concurrent tools), then streams
a 200-delta answer; every event is consumed. Measured with the in-memory session store and
with the SQLite store (a real file in a temp dir). Run:

    .venv/bin/python bench/loop_overhead.py [--turns 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from seam.contracts import SessionStore, ToolContext
from seam.core import AgentLoop, DefaultToolRegistry, InMemorySessionStore, ScriptedModel
from seam.core.scripted_model import Step, call

DELTAS = ["tok "] * 200


class EchoTool:
    name = "echo"
    description = "Echo the text back."
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    }
    concurrent = True
    idempotent = True

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        return str(args["text"])


def script(turns: int) -> list[Step]:
    steps: list[Step] = []
    for _ in range(turns):
        steps.append(Step(calls=[call("echo", text=str(i)) for i in range(3)]))
        steps.append(Step(deltas=DELTAS))
    return steps


async def measure(store: SessionStore, turns: int, sessions: int = 20) -> list[float]:
    tools = DefaultToolRegistry()
    tools.register_tool(EchoTool())
    model = ScriptedModel(script(turns + 50))
    loop = AgentLoop(model=model, tools=tools, sessions=store)
    samples: list[float] = []
    for i in range(turns + 50):
        key = f"bench-{i % sessions}"
        start = time.process_time_ns()
        async for _event in loop.run(key, "go"):
            pass
        if i >= 50:  # warm-up turns are not counted
            samples.append((time.process_time_ns() - start) / 1e6)
    return samples


def report(label: str, samples: list[float]) -> None:
    samples.sort()
    p50 = statistics.median(samples)
    p95 = samples[int(len(samples) * 0.95)]
    mean = statistics.fmean(samples)
    print(f"{label:<28} mean {mean:7.3f} ms   p50 {p50:7.3f} ms   p95 {p95:7.3f} ms")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=2000)
    args = parser.parse_args()
    print(f"per-turn framework CPU time, {args.turns} turns (3 tool calls + 200 text deltas)")
    gc.collect()
    report("in-memory store", await measure(InMemorySessionStore(), args.turns))
    try:
        from seam.services.sessions.sqlite import SQLiteSessionStore
    except ImportError:
        print("sqlite store: not available")
        return
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteSessionStore(str(Path(tmp) / "sessions.db"))
        try:
            report("sqlite store (WAL, file)", await measure(store, args.turns // 2))
        finally:
            await store.aclose()


if __name__ == "__main__":
    asyncio.run(main())
