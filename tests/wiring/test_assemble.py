"""`assemble_runtime` is the testing seam: a scripted runtime is a whole runtime, and it
touches no file, env var or home path (and changes nothing it is handed)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import sysconfig
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any

import pytest

from seam.contracts.events import Done, TextDelta, ToolEnd
from seam.contracts.messages import Message
from seam.core import InMemoryExecutionStore, ScriptedModel, call, text_step, tool_step
from seam.core.coordinator import Coordinator
from seam.core.scripted_model import Step, error_step
from seam.core.tool_registry import DefaultToolRegistry
from seam.wiring import assemble_runtime, create_runtime

# Audit events that name a path the process opens, lists, creates, changes or removes.
_PATH_EVENTS = frozenset(
    {
        "open",
        "os.listdir",
        "os.scandir",
        "os.mkdir",
        "os.rmdir",
        "os.remove",
        "os.rename",
        "os.chmod",
        "os.chown",
        "os.utime",
        "os.truncate",
        "os.link",
        "os.symlink",
        "shutil.copyfile",
        "shutil.rmtree",
        "sqlite3.connect",
    }
)
# Audit events a runtime with nothing real wired must never raise at all (sockets made
# are fine: the event loop makes its own self-pipe; reaching anywhere is not).
_FORBIDDEN_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.fork",
        "socket.connect",
        "socket.bind",
        "socket.getaddrinfo",
        "socket.sendto",
    }
)


class _Audit:
    """What the process did while `active` (an audit hook cannot be removed, so the one
    installed here records only between `start` and `stop`)."""

    def __init__(self) -> None:
        self.active = False
        self.events: list[tuple[str, str]] = []

    def __call__(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.active:
            return
        if event in _PATH_EVENTS and args:
            path = args[0]
            if isinstance(path, (str, bytes, os.PathLike)):
                self.events.append((event, os.fsdecode(path)))
        elif event in _FORBIDDEN_EVENTS:
            self.events.append((event, repr(args)[:200]))


_AUDIT = _Audit()
sys.addaudithook(_AUDIT)


class _RecordingEnviron(MutableMapping[str, str]):
    """`os.environ` that writes down every variable read (`*`: all of them at once)."""

    def __init__(self, real: MutableMapping[str, str]) -> None:
        self.real = real
        self.reads: list[str] = []

    def __getitem__(self, key: str) -> str:
        self.reads.append(key)
        return self.real[key]

    def __setitem__(self, key: str, value: str) -> None:
        self.reads.append(f"set {key}")
        self.real[key] = value

    def __delitem__(self, key: str) -> None:
        self.reads.append(f"del {key}")
        del self.real[key]

    def __iter__(self) -> Iterator[str]:
        self.reads.append("*")
        return iter(self.real)

    def __len__(self) -> int:
        return len(self.real)

    def copy(self) -> dict[str, str]:
        self.reads.append("*")
        return dict(self.real)


class _Watch:
    """Paths the process touched and env vars it read inside `watch()`."""

    def __init__(self, environ: _RecordingEnviron) -> None:
        self.environ = environ
        self.events: list[tuple[str, str]] = []

    @property
    def env_reads(self) -> list[str]:
        return self.environ.reads

    @property
    def effects(self) -> list[tuple[str, str]]:
        """The events, less the import system reading Python modules (a lazy import is
        not the runtime touching a file)."""
        return [(event, path) for event, path in self.events if not _is_import(event, path)]

    def touched(self, root: Path) -> list[tuple[str, str]]:
        return [(event, path) for event, path in self.events if path.startswith(str(root))]


def _is_import(event: str, path: str) -> bool:
    if event == "open":
        return path.endswith((".py", ".pyc", ".so")) or "__pycache__" in path
    if event not in ("os.listdir", "os.scandir"):
        return False
    # The import system lists sys.path entries and the package folders inside the
    # interpreter's own library dirs (a lazily imported dependency such as fastjsonschema).
    return path in sys.path or path.startswith(_LIBRARY_DIRS)


_LIBRARY_DIRS = tuple(
    {
        sysconfig.get_paths()[name] + os.sep
        for name in ("stdlib", "platstdlib", "purelib", "platlib")
    }
)


@pytest.fixture
def locked_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """HOME and SEAM_HOME inside a directory nobody may read (mode 000; root still can,
    which is why `watch` records what is touched instead of relying on errors)."""
    locked = tmp_path / "locked"
    (locked / ".seam").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(locked))
    monkeypatch.setenv("SEAM_HOME", str(locked / ".seam"))
    locked.chmod(0)
    yield locked
    locked.chmod(0o700)


@contextlib.contextmanager
def watching(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Watch]:
    """Records, inside the block, every path touched (the audit hook) and every env var
    read through `os.environ`, `os.getenv` or `Path.home()`. Used inside the test, so
    neither the event loop starting nor pytest's own bookkeeping is recorded."""
    environ = _RecordingEnviron(os.environ)
    monkeypatch.setattr(os, "environ", environ)
    recorded = _Watch(environ)
    _AUDIT.events = recorded.events
    _AUDIT.active = True
    try:
        yield recorded
    finally:
        _AUDIT.active = False
        monkeypatch.setattr(os, "environ", environ.real)


def _note_script() -> ScriptedModel:
    return ScriptedModel(
        [
            tool_step(call("write_file", path="note.txt", content="remember the milk")),
            tool_step(call("read_file", path="note.txt")),
            text_step("It says: remember the milk."),
        ]
    )


async def test_a_scripted_runtime_touches_no_file_env_var_or_home_path(
    locked_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with watching(monkeypatch) as watch:
        async with assemble_runtime(model=_note_script()) as runtime:
            events = [e async for e in runtime.run("s1", "note it, then read it back")]
            stored = await runtime.storage.read_text("/note.txt")
    ends = [e for e in events if isinstance(e, ToolEnd)]
    assert [(e.name, e.is_error) for e in ends] == [("write_file", False), ("read_file", False)]
    assert "remember the milk" in ends[1].result
    assert isinstance(events[-1], Done) and events[-1].text == "It says: remember the milk."
    assert stored == "remember the milk"  # the default storage is in memory
    # Not only nothing under the locked home: no path opened at all, no variable read.
    assert watch.effects == []
    assert watch.env_reads == []


async def test_the_watch_sees_what_configuration_touches(
    locked_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # create_runtime reads the settings: the same probes catch it (as root the locked home
    # is still writable; as another user creating it fails, which is the point).
    with watching(monkeypatch) as watch, contextlib.suppress(PermissionError):
        runtime = create_runtime(model=ScriptedModel([]), store=InMemoryExecutionStore())
        await runtime.aclose()
    assert "SEAM_HOME" in watch.env_reads
    assert watch.touched(locked_home)


async def test_collaborators_handed_in_are_used_as_they_are() -> None:
    store = InMemoryExecutionStore()
    coordinator = Coordinator(store, owner="me")
    tools = DefaultToolRegistry()
    model = ScriptedModel([text_step("hi")])
    async with assemble_runtime(
        model=model, store=store, coordinator=coordinator, tools=tools
    ) as runtime:
        sub = await runtime.ask("s", "hello")
    assert (sub.outcome, sub.result, sub.lease_owner) == ("completed", "hi", None)
    assert runtime.coordinator is coordinator and runtime.store is store
    assert runtime.tools is tools and tools.names() == []  # no built-ins added to it
    [request] = model.requests
    assert list(request.tools) == []
    assert coordinator.compress is None  # a caller's coordinator is not rewired
    assert runtime.owner == "me"


async def test_the_runtimes_own_coordinator_compacts_an_overflowing_session() -> None:
    store = InMemoryExecutionStore()
    model = ScriptedModel(
        [
            error_step("context_overflow", "too long"),
            text_step("Summary: they talked about the weather."),
            text_step("fits now"),
        ]
    )
    runtime = assemble_runtime(model=model, store=store)
    key = runtime.session_key_for("long")
    await runtime.get_session(key)
    for n in range(20):
        await store.append(
            key, [Message("user", f"question {n} " + "x" * 400), Message("assistant", f"a{n}")]
        )
    async with runtime:
        sub = await runtime.ask("long", "and now?")
    assert (sub.outcome, sub.result) == ("completed", "fits now")
    overflowed, _summary, retried = model.requests
    assert len(retried.messages) < len(overflowed.messages)
    assert "Summary: they talked about the weather." in str(retried.messages)


async def test_leaving_run_early_cancels_the_turn() -> None:
    stalls = Step(deltas=["Once upon", " a time"], stall=True, error_after=1)
    async with assemble_runtime(model=ScriptedModel([stalls])) as runtime:
        # `aclosing`: the generator's cleanup runs as the loop is left, not when the
        # garbage collector gets to it.
        async with asyncio.timeout(10), contextlib.aclosing(runtime.run("s", "a story")) as run:
            async for event in run:
                if isinstance(event, TextDelta):
                    break
        [sub] = await runtime.store.submissions(runtime.session_key_for("s"))
    assert (sub.state, sub.outcome) == ("settled", "aborted")


async def test_a_closed_runtime_closes_its_collaborators() -> None:
    class Counting(InMemoryExecutionStore):
        opened = closed = 0

        async def open(self) -> None:
            self.opened += 1

        async def aclose(self) -> None:
            self.closed += 1
            await super().aclose()

    store = Counting()
    with pytest.raises(RuntimeError, match="boom"):
        async with assemble_runtime(model=ScriptedModel([]), store=store):
            raise RuntimeError("boom")
    assert (store.opened, store.closed) == (1, 1)
