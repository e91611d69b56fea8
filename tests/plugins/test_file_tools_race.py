"""The symlink-swap race, for real: a process inside bubblewrap flips workspace paths
between an in-reach file (or directory) and a way out, as fast as it can, while the file
tools run 200 rounds against those paths. Nothing outside may be read or written.

The way out is a fake `$SEAM_HOME` next to the workspace: a `config.toml` holding a canary
and a `SOUL.md` that must never change. The flipper swaps with `renameat2(RENAME_EXCHANGE)`
(one syscall per flip): `f` <-> a link to the config, `s` <-> a link to `SOUL.md`, and the
directory `d` <-> a link to the whole fake home, so both the last component and a middle
one change under the tools' feet.

Measured on the code before the tools opened beneath a root descriptor: 19 to 43 of 200
rounds read the canary or overwrote `SOUL.md` (and 23 to 55 calls crashed in realpath);
after: 0, in every variant.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from seam.contracts.storage import Reach
from seam.contracts.tools import Tool, ToolContext, ToolError
from seam.core.storage import ScopedStorage
from seam.plugins.tools.files import ListDir, ReadFile, SearchFiles, WriteFile
from seam.plugins.tools.patch import Patch
from seam.services.sandbox.bwrap import DEFAULT_BWRAP, bwrap_available
from seam.services.sandbox.mounts import mount_args
from seam.services.storage.fs import FsStorage
from tests.support.tools import checked

if not Path(DEFAULT_BWRAP).exists():
    pytestmark = pytest.mark.skip(reason=f"{DEFAULT_BWRAP} is not installed")
elif not bwrap_available():
    pytestmark = pytest.mark.skip(reason="bwrap cannot create namespaces on this machine")

ROUNDS = 200
CANARY = "CANARY-7f3a-config-secret"
SOUL = "ORIGINAL SOUL, never to be overwritten\n"
SYSTEM_PYTHON = "/usr/bin/python3"

# Runs inside bwrap with the workspace as its cwd. Pairs are exchanged atomically; a tool
# that replaced a link with a file (allowed: it stays inside) is healed every 64 flips.
FLIPPER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
pairs = [(n, n + b".alt", t) for n, t in zip((b"f", b"s", b"d"), sys.argv[1:])]
def heal(a, b, target):
    try:
        if os.path.islink(a) or os.path.islink(b):
            return
        os.symlink(target, b".heal")
        os.replace(b".heal", b)
    except OSError:
        pass
n = 0
while True:
    for a, b, target in pairs:
        libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
    n += 1
    if n % 64 == 0:
        for pair in pairs:
            heal(*pair)
    if n == 1:
        print("ready", flush=True)
"""


@dataclass
class Outcome:
    results: list[str] = field(default_factory=list)
    leaked_rounds: int = 0
    reads_leaked: int = 0
    writes_leaked: int = 0


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    work = tmp_path / "work"
    home = tmp_path / "seam-home"
    for d in (work, work / "d", home):
        d.mkdir()
    (home / "config.toml").write_text(f'api_key = "{CANARY}"\n')
    (home / "SOUL.md").write_text(SOUL)
    (home / f"{CANARY}.txt").write_text("a name that must not be listed\n")
    (work / "f").write_text("harmless\n")
    (work / "s").write_text("harmless soul\n")
    (work / "d" / "config.toml").write_text("harmless\n")
    (work / "d" / "SOUL.md").write_text("harmless soul\n")
    (work / "f.alt").symlink_to(home / "config.toml")
    (work / "s.alt").symlink_to(home / "SOUL.md")
    (work / "d.alt").symlink_to(home)
    return {"work": work, "home": home}


@pytest.fixture
def flipper(layout: dict[str, Path]) -> Iterator[subprocess.Popen[str]]:
    work, home = layout["work"], layout["home"]
    reach = Reach(read=(str(work),), write=(str(work),))
    argv = [
        DEFAULT_BWRAP,
        *mount_args(str(work), reach, home=None),
        "--unshare-all",
        "--die-with-parent",
        "--chdir",
        str(work),
        "--",
        SYSTEM_PYTHON,
        "-c",
        FLIPPER,
        str(home / "config.toml"),
        str(home / "SOUL.md"),
        str(home),
    ]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env={})
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        yield proc
    finally:
        proc.kill()
        proc.wait()


async def _call(tool: Tool, ctx: ToolContext, **args: Any) -> str:
    try:
        return await checked(tool).run(args, ctx)
    except ToolError as exc:
        return f"error: {exc}"
    except Exception as exc:  # a traceback is a failure too (counted, shown at the end)
        return f"crash: {type(exc).__name__}: {exc}"


async def _round(ctx: ToolContext, home: Path, outcome: Outcome) -> None:
    """One round of every file tool against the flipping paths; counts what got out."""
    reads = [
        await _call(ReadFile(), ctx, path="f"),
        await _call(ReadFile(), ctx, path="d/config.toml"),
        await _call(ListDir(), ctx, path="d"),
        await _call(SearchFiles(), ctx, pattern="api_key", path="d"),
        await _call(SearchFiles(), ctx, pattern="api_key", path="f"),
    ]
    writes = [
        await _call(WriteFile(), ctx, path="s", content="harmless soul\n"),
        await _call(WriteFile(), ctx, path="d/SOUL.md", content="harmless soul\n"),
        await _call(Patch(), ctx, path="s", old="harmless soul", new="patched soul"),
        await _call(Patch(), ctx, path="d/SOUL.md", old="harmless soul", new="patched soul"),
    ]
    outcome.results.extend(reads + writes)
    read_leak = sum(CANARY in r for r in reads)
    write_leak = (home / "SOUL.md").read_text() != SOUL or (
        CANARY not in (home / "config.toml").read_text()
    )
    if write_leak:  # put it back so the next round's leak is seen too
        (home / "SOUL.md").write_text(SOUL)
        (home / "config.toml").write_text(f'api_key = "{CANARY}"\n')
    outcome.reads_leaked += read_leak
    outcome.writes_leaked += write_leak
    outcome.leaked_rounds += bool(read_leak or write_leak)


@pytest.mark.parametrize("denied", [True, False], ids=["home-denied", "home-only-outside"])
@pytest.mark.parametrize("openat2", [None, False], ids=["openat2", "nofollow-walk"])
async def test_symlink_swaps_from_the_sandbox_reach_nothing_outside(
    layout: dict[str, Path], flipper: subprocess.Popen[str], denied: bool, openat2: bool | None
) -> None:
    """`denied`: the fake home is on the deny list (as wiring puts `$SEAM_HOME`), or only
    outside the roots; `openat2`: the kernel's call, or the walk used where it is missing."""
    work, home = layout["work"], layout["home"]
    outside_before = sorted(p.name for p in home.iterdir())
    deny = [str(home)] if denied else []
    fs = FsStorage(openat2=openat2)
    assert fs.uses_openat2 is (openat2 is None)  # this kernel has openat2 (Linux 5.6+)
    storage = ScopedStorage(fs, working_dir=str(work), deny=deny)
    ctx = ToolContext(session_key="race", storage=storage, working_dir=str(work))
    outcome = Outcome()
    started = time.monotonic()
    for _ in range(ROUNDS):
        await _round(ctx, home, outcome)
    elapsed = time.monotonic() - started
    assert flipper.poll() is None, "the flipper stopped: the race did not run"
    assert fs.uses_openat2 is (openat2 is None)  # no silent fallback during the run
    print(
        f"race: {outcome.leaked_rounds}/{ROUNDS} rounds leaked, "
        f"{sum(r.startswith('crash:') for r in outcome.results)} crashes "
        f"({outcome.reads_leaked} reads, {outcome.writes_leaked} writes) in {elapsed:.1f}s"
    )
    assert_nothing_leaked(outcome, home, outside_before)
    assert sum(" refused: " in r for r in outcome.results) >= ROUNDS // 10


def assert_nothing_leaked(outcome: Outcome, home: Path, outside_before: list[str]) -> None:
    """No round read the canary or wrote outside, no call crashed, the outside is as it
    was, and the race ran both ways (in-reach files read and written between refusals)."""
    crashes = [r for r in outcome.results if r.startswith("crash:")]
    assert outcome.leaked_rounds == 0, (
        f"{outcome.leaked_rounds}/{ROUNDS} rounds leaked: {outcome.reads_leaked} canary reads, "
        f"{outcome.writes_leaked} outside writes"
    )
    assert not crashes, f"{len(crashes)} tool calls crashed, e.g. {crashes[0]}"
    assert (home / "SOUL.md").read_text() == SOUL
    assert sorted(p.name for p in home.iterdir()) == outside_before
    # A few of each is proof enough; how many depends on the flipper's timing (19 writes of
    # about 1,200 calls in one CI run), so the floor is low on purpose.
    assert sum(r == "1|harmless" for r in outcome.results) >= ROUNDS // 40
    assert sum(r.startswith("wrote ") for r in outcome.results) >= ROUNDS // 40
