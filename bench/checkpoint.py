"""Checkpoint cost (issue #24): what undo adds to a turn, on a project of `--files` files.

Builds a throwaway project (`--files` small source files in 100 folders, plus a
`node_modules` the ignore list skips), then measures with the real engine and git:

- the first checkpoint of the project (every file hashed into the shadow repository);
- a later checkpoint after `--changed` files changed (`--rounds` times; p50 and p99): the
  cost a changing turn pays before its first change (and again when it ends);
- a checkpoint with nothing changed (the same id comes back);
- restoring the changed files (what `seam undo` writes);
- a turn that changes nothing: the hook on each of its calls (`read_file`, and `terminal`
  with a command the guard proves read-only), in microseconds per call, and whether any
  git call or file was made (there must be none).

Goal: a later checkpoint under 150 ms; nothing for a turn that changes nothing. Run:

    .venv/bin/python bench/checkpoint.py [--files 10000] [--changed 5] [--rounds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import tempfile
import time
from pathlib import Path

from seam.contracts.hooks import BeforeToolCall
from seam.contracts.sessions import SessionInfo
from seam.plugins.checkpoints.turns import TurnCheckpoints
from seam.services.checkpoints import ShadowCheckpoints
from seam.wiring.guard import build_guardrail
from seam.wiring.settings import Settings


def make_project(root: Path, files: int) -> list[Path]:
    made = []
    for n in range(files):
        path = root / f"pkg{n % 100:02d}" / f"module_{n}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'"""Module {n}."""\n\nVALUE = {n}\n' + "# padding line\n" * 10)
        made.append(path)
    deps = root / "node_modules" / "dep"
    deps.mkdir(parents=True)
    for n in range(500):
        (deps / f"f{n}.js").write_text("module.exports = 1;\n")
    return made


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


def p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


CPU: list[float] = []  # CPU seconds (this process and git) of each `timed` call


def cpu_now() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


async def timed(coro: object) -> tuple[float, object]:
    """Wall time of `coro`; its CPU time (git's included) goes to `CPU`: on a busy
    machine the wall time is mostly waiting for a core, the CPU time is the cost."""
    start, cpu = time.perf_counter(), cpu_now()
    result = await coro  # type: ignore[misc]
    CPU.append(cpu_now() - cpu)
    return time.perf_counter() - start, result


class NoStore:
    """The hook's log and transcript for a turn that changes nothing: any call fails the
    bench (a turn that changes nothing must not touch the store)."""

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"a read-only turn called the store ({name})")


async def main(files: int, changed: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        made = make_project(root, files)
        engine = ShadowCheckpoints(Path(tmp) / "checkpoints", base_env=dict(os.environ))
        work = str(root)
        print(f"project: {files:,} files (+500 ignored in node_modules), {changed} changed/round")
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (wall / CPU)")
        first, cp = await timed(engine.snapshot(work, session_key="bench"))
        print(f"first checkpoint        {ms(first)} / {ms(CPU[-1])}")
        later: list[float] = []
        CPU.clear()
        for round_ in range(rounds):
            for path in made[round_ * changed : (round_ + 1) * changed]:
                path.write_text(path.read_text() + f"# edit {round_}\n")
            took, _ = await timed(engine.snapshot(work, session_key="bench"))
            later.append(took)
        print(
            f"later checkpoint   p50 {ms(statistics.median(later))} / {ms(statistics.median(CPU))}"
            f"   p99 {ms(p99(later))} / {ms(p99(CPU))}"
        )
        CPU.clear()
        same = [(await timed(engine.snapshot(work, session_key="bench")))[0] for _ in range(5)]
        print(
            f"unchanged checkpoint    {ms(statistics.median(same))} / "
            f"{ms(statistics.median(CPU))} (same id)"
        )
        diff = await engine.diff(work, str(cp))
        restore, _ = await timed(engine.restore(work, str(cp), [c.path for c in diff.changes]))
        print(f"restore {len(diff.changes)} files       {ms(restore)} / {ms(CPU[-1])}")
        print(f"disk use                {await engine.disk_usage() / 1e6:8.1f} MB")
        await read_only_turn(Path(tmp), work)


async def read_only_turn(tmp: Path, work: str) -> None:
    """The hook on a turn's reading calls: cost per call, and proof nothing ran."""
    engine = ShadowCheckpoints(tmp / "untouched", base_env=dict(os.environ))
    guard = build_guardrail(Settings(home=tmp / "seam", working_dir=Path(work)))
    hook = TurnCheckpoints(engine, NoStore(), NoStore(), lambda _key: work, guard)  # type: ignore[arg-type]
    calls = [
        BeforeToolCall("s", "t", 1, "c1", "read_file", {"path": "pkg00/module_0.py"}),
        BeforeToolCall("s", "t", 1, "c2", "list_dir", {"path": "."}),
        BeforeToolCall("s", "t", 1, "c3", "terminal", {"command": "grep -rn VALUE pkg01 | wc -l"}),
    ]
    for call in calls:
        await hook.before_tool_call(call)  # warm (the guard loads its grammar once)
    for call in calls:
        n = 1000
        start = time.perf_counter()
        for _ in range(n):
            assert await hook.before_tool_call(call) is None
        each = (time.perf_counter() - start) / n * 1e6
        print(f"no-change turn, {call.name:<10} {each:8.1f} µs/call")
    assert not (tmp / "untouched").exists(), "a turn that changes nothing ran git"
    print("no-change turn: no git call, no store call, nothing written")
    _ = SessionInfo  # the hook reads a session row only when it takes a checkpoint


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--changed", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    asyncio.run(main(args.files, args.changed, args.rounds))
