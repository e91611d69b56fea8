"""Sandbox start cost: what one `terminal` call pays before the command itself runs.

Runs `true` through each backend's `Sandbox.run` (the path the terminal tool takes: argv
built, mounts planned from the filesystem, limits applied, process group started and
reaped, output captured) `--calls` times in a throwaway working dir, and prints p50 and
p99 in milliseconds per call, beside a bare `subprocess` start of `/bin/true` for scale.
The bwrap row is skipped when bubblewrap cannot run here. Run:

    .venv/bin/python bench/sandbox.py [--calls 200] [--network]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable

from seam.services.sandbox.bwrap import BwrapSandboxProvider, bwrap_available
from seam.services.sandbox.local import LocalSandboxProvider
from seam.services.sandbox.process import GroupSandboxProvider


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return statistics.median(ordered), p99


async def timed(fn: Callable[[], Awaitable[object]], calls: int) -> list[float]:
    await fn()  # warm: the first call builds the sandbox and the event loop's watcher
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        await fn()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


async def backend(
    provider: GroupSandboxProvider, workdir: str, calls: int, net: bool
) -> list[float]:
    sandbox = provider.for_session("bench", working_dir=workdir, network=net)

    async def call() -> None:
        result = await sandbox.run("true")
        if result.exit_code != 0:
            raise SystemExit(f"{provider.name}: `true` failed: {result.output}")

    try:
        return await timed(call, calls)
    finally:
        await provider.aclose()


async def bare(calls: int) -> list[float]:
    async def call() -> None:
        await asyncio.to_thread(subprocess.run, ["/bin/true"], check=True)

    return await timed(call, calls)


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--network", action="store_true", help="network = true for the sandbox")
    args = parser.parse_args()
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": tempfile.mkdtemp(prefix="bench-home-")}
    rows: dict[str, list[float]] = {"subprocess /bin/true": await bare(args.calls)}
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as workdir:
        rows["local"] = await backend(
            LocalSandboxProvider(base_env=env), workdir, args.calls, args.network
        )
        if bwrap_available():
            provider = BwrapSandboxProvider(base_env=env)
            rows["bwrap"] = await backend(provider, workdir, args.calls, args.network)
        else:
            print("bwrap: skipped (bubblewrap cannot run here)")
    print(f"{'ms per call':24}{'p50':>10}{'p99':>10}   ({args.calls} calls of `true`)")
    for name, samples in rows.items():
        p50, p99 = percentiles(samples)
        print(f"{name:24}{p50:10.1f}{p99:10.1f}")


if __name__ == "__main__":
    asyncio.run(main())
