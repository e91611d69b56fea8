"""The soak: 1,000 sessions in one process for `--minutes` (default 10) at a steady rate
on SQLite, to show nothing piles up: per minute it reports the turns finished
(throughput), the p99 latency the framework adds to a turn and the process's RSS. Memory
must stay flat: RSS at the end may exceed RSS after the first minute (imports, caches and
the SQLite page cache warmed up) by less than 5% (PASS/FAIL, exit code 1 on FAIL).

Each turn is `Runtime.ask` over a real SQLite store (submission, claim, a tool call and
its result, a 50-delta answer, transcript, event log, settlement). The model is the
scripted `SlowModel` of bench/concurrency.py: it waits `--latency` ms per response and
answers from the request, so 1,000 sessions share it; unlike `ScriptedModel` it keeps no
record of its requests, which over ten minutes would itself be the leak. `--tracemalloc`
prints the allocation sites that grew most between the first minute and the end.

    .venv/bin/python bench/soak.py [--minutes 10] [--rate 20] [--latency 50] [--tracemalloc]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

# Run as a script, this folder is on sys.path.
from concurrency import SESSIONS, build, one_turn, pct, prepare

GROWTH_LIMIT = 0.05


def rss_mb() -> float:
    """The process's resident set size (Linux /proc), in MiB."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


async def soak(minutes: float, rate: float, latency: float, trace: bool) -> bool:
    from seam.services.sessions.sqlite import SQLiteSessionStore

    model_time = 2 * latency
    with tempfile.TemporaryDirectory() as tmp:
        rt = build(SQLiteSessionStore(str(Path(tmp) / "sessions.db")), latency)
        await rt.open()
        try:
            names = await prepare(rt)
            window: list[float] = []
            failures = 0
            pending: set[asyncio.Task[float]] = set()

            def finished(task: asyncio.Task[float]) -> None:
                nonlocal failures
                pending.discard(task)
                if task.cancelled() or task.exception() is not None:
                    failures += 1
                else:
                    window.append(task.result())

            rows: list[tuple[int, int, float, float, int]] = []
            first_snapshot: tracemalloc.Snapshot | None = None
            if trace:
                tracemalloc.start(10)
            start = time.perf_counter()
            total = int(rate * minutes * 60)
            minute_end = start + 60
            print(
                f"soak: {SESSIONS} sessions, {rate:g} turns/s, model {latency * 1000:g} ms x2,"
                f" {minutes:g} min, SQLite; load average {os.getloadavg()[0]:.2f}"
            )
            print("minute  turns  turns/s  p99 added ms  RSS MiB  in flight")
            for i in range(total + 1):
                now = time.perf_counter()
                if now >= minute_end or i == total:
                    if i == total:
                        await asyncio.gather(*pending, return_exceptions=True)
                    gc.collect()
                    minute = len(rows) + 1
                    rss = rss_mb()
                    p99 = pct(window, 0.99)
                    elapsed = time.perf_counter() - (minute_end - 60)
                    rows.append((minute, len(window), len(window) / elapsed, p99, len(pending)))
                    print(
                        f"{minute:6d} {len(window):6d} {len(window) / elapsed:8.1f}"
                        f" {p99:13.1f} {rss:8.1f} {len(pending):10d}",
                        flush=True,
                    )
                    rss_series.append(rss)
                    window = []
                    minute_end += 60
                    if trace and minute == 1:
                        first_snapshot = tracemalloc.take_snapshot()
                    if i == total:
                        break
                due = start + i / rate
                pause = due - time.perf_counter()
                if pause > 0:
                    await asyncio.sleep(pause)
                task = asyncio.ensure_future(one_turn(rt, names[i % SESSIONS], model_time))
                pending.add(task)
                task.add_done_callback(finished)
            wall = time.perf_counter() - start
            if trace and first_snapshot is not None:
                top = tracemalloc.take_snapshot().compare_to(first_snapshot, "lineno")
                print("tracemalloc, grown most since minute 1:")
                for stat in top[:10]:
                    print(f"  {stat}")
        finally:
            await rt.aclose()
    base = rss_series[0]
    growth = (rss_series[-1] - base) / base if base else 0.0
    ok = growth < GROWTH_LIMIT and failures == 0
    print(
        f"turns {total} in {wall:.0f} s ({total / wall:.1f}/s), failed {failures};"
        f" RSS {base:.1f} MiB after minute 1 -> {rss_series[-1]:.1f} MiB at the end"
        f" ({growth * 100:+.1f}%, limit +{GROWTH_LIMIT * 100:.0f}%);"
        f" load average {os.getloadavg()[0]:.2f}: {'PASS' if ok else 'FAIL'}"
    )
    return ok


rss_series: list[float] = []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--rate", type=float, default=20.0, help="turns per second")
    parser.add_argument("--latency", type=float, default=50.0, help="model ms per response")
    parser.add_argument("--tracemalloc", action="store_true")
    args = parser.parse_args()
    ok = asyncio.run(soak(args.minutes, args.rate, args.latency / 1000, args.tracemalloc))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
