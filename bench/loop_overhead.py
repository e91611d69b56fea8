"""Framework CPU time per agent turn.

The turn: a scripted model asks for 3 tool calls (trivial, concurrent tools), then streams
a 200-delta answer; every event is consumed. Measured with the in-memory session store and
with the SQLite store (a real file in a temp dir). `--tracing` adds the OpenTelemetry
tracer (batched, to an exporter that drops the spans: the cost of making them). Run:

    .venv/bin/python bench/loop_overhead.py [--turns 2000] [--tracing]
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


async def measure(
    store: SessionStore, turns: int, sessions: int = 20, tracer: Any = None
) -> list[float]:
    tools = DefaultToolRegistry()
    tools.register_tool(EchoTool())
    model = ScriptedModel(script(turns + 50))
    loop = AgentLoop(model=model, tools=tools, sessions=store, tracer=tracer)
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
    parser.add_argument("--tracing", action="store_true", help="with OpenTelemetry spans")
    args = parser.parse_args()
    tracer = _dropping_tracer() if args.tracing else None
    traced = ", traced" if tracer is not None else ""
    print(f"per-turn framework CPU time, {args.turns} turns (3 tool calls + 200 text deltas)")
    gc.collect()
    report(
        f"in-memory store{traced}", await measure(InMemorySessionStore(), args.turns, tracer=tracer)
    )
    try:
        from seam.services.sessions.sqlite import SQLiteSessionStore
    except ImportError:
        print("sqlite store: not available")
        return
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteSessionStore(str(Path(tmp) / "sessions.db"))
        try:
            samples = await measure(store, args.turns // 2, tracer=tracer)
            report(f"sqlite store (WAL, file){traced}", samples)
        finally:
            await store.aclose()


def _dropping_tracer() -> Any:
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    from seam.services.telemetry.otel import OtelTracer

    class Drop(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    return OtelTracer(Drop())


if __name__ == "__main__":
    asyncio.run(main())
