"""Sandbox start cost: what one `terminal` call pays before the command itself runs.

Runs `true` through each backend's `Sandbox.run` (the path the terminal tool takes: argv
built, mounts planned from the filesystem, limits applied, process group started and
reaped, output captured) `--calls` times in a throwaway working dir, in rounds of
`--block` calls per row, and prints p50 and p99 in milliseconds per call, beside a bare
`subprocess` start of `/bin/true` for scale and each backend with its limits off. The bwrap rows are
skipped when bubblewrap cannot run here. It runs unchanged on the code before the limits
(`PYTHONPATH=<old checkout>/src`), for a before/after pair. Run:

    .venv/bin/python bench/sandbox.py [--calls 200] [--block 50] [--network]
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
from seam.services.sandbox.process import GroupSandboxProvider, SandboxOptions


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return statistics.median(ordered), p99


Call = Callable[[], Awaitable[object]]


def sandbox_call(provider: GroupSandboxProvider, workdir: str, net: bool) -> Call:
    sandbox = provider.for_session("bench", working_dir=workdir, network=net)

    async def call() -> None:
        result = await sandbox.run("true")
        if result.exit_code != 0:
            raise SystemExit(f"{provider.name}: `true` failed: {result.output}")

    return call


async def bare() -> None:
    await asyncio.to_thread(subprocess.run, ["/bin/true"], check=True)


def providers(env: dict[str, str]) -> dict[str, GroupSandboxProvider]:
    """Each backend as configured by default, and (where this version has limits) with
    every limit off, to show what the limits themselves cost."""
    found: dict[str, GroupSandboxProvider] = {"local": LocalSandboxProvider(base_env=env)}
    bwrap = bwrap_available()
    if bwrap:
        found["bwrap"] = BwrapSandboxProvider(base_env=env)
    try:
        from seam.services.sandbox.limits import NO_LIMITS
    except ImportError:  # the code before limits existed
        return found
    off = SandboxOptions(limits=NO_LIMITS)
    found["local, limits off"] = LocalSandboxProvider(base_env=env, options=off)
    if bwrap:
        found["bwrap, limits off"] = BwrapSandboxProvider(base_env=env, options=off)
    return found


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--network", action="store_true", help="network = true for the sandbox")
    parser.add_argument("--block", type=int, default=50, help="calls per row in a round")
    args = parser.parse_args()
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": tempfile.mkdtemp(prefix="bench-home-")}
    if not bwrap_available():
        print("bwrap: skipped (bubblewrap cannot run here)")
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as workdir:
        made = providers(env)
        calls: dict[str, Call] = {"subprocess /bin/true": bare}
        calls |= {name: sandbox_call(p, workdir, args.network) for name, p in made.items()}
        rows: dict[str, list[float]] = {name: [] for name in calls}
        # Row by row: a bwrap call leaves the kernel tearing its namespaces down for a
        # while, which would land on whatever runs next. Rounds of `--block` calls per
        # row, so a load change on a shared machine still reaches every row.
        for call in calls.values():
            await call()  # warm: the first call builds the sandbox (and starts the proxy)
        for _ in range(max(1, args.calls // args.block)):
            for name, call in calls.items():
                for _ in range(args.block):
                    started = time.perf_counter()
                    await call()
                    rows[name].append((time.perf_counter() - started) * 1000)
        for provider in made.values():
            await provider.aclose()
    print(f"{'ms per call':24}{'p50':>10}{'p99':>10}   ({args.calls} calls of `true`)")
    for name, samples in rows.items():
        p50, p99 = percentiles(samples)
        print(f"{name:24}{p50:10.1f}{p99:10.1f}")


if __name__ == "__main__":
    asyncio.run(main())
