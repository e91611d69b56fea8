"""The chaos suite's checks in one process, over many seeds in seconds: workers sharing
one in-memory store die at any store call (before it, or after its write landed), see
outages before a write and after it landed with the answer lost, and stall while another
worker takes their claim over; the model drops streams and fails. Every submission
settles, and every transcript is one a provider accepts: each input once, each tool call
answered once, no answer twice.

What it cannot reach, the process-level suite does (`tests/chaos`: real SQLite and
PostgreSQL, SIGKILL, a server restart). What it found first: a failed turn's last write,
which carried the held input, written again after an outage whose write had landed."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
import random
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from seam.contracts.db import StoreUnavailable
from seam.contracts.execution import Submission
from seam.contracts.messages import Message, ToolCall
from seam.contracts.model import ModelError, ModelRequest
from seam.core.coordinator import Coordinator
from seam.core.execution import InMemoryExecutionStore
from seam.core.loop import AgentLoop
from seam.core.outage import OutagePolicy
from seam.core.scripted_model import ScriptedModel, Step
from seam.core.session_factory import SessionFactory
from seam.core.tool_registry import DefaultToolRegistry
from tests.core.test_coordinator import CountingTool

T = TypeVar("T")

# The worker a store call comes from, and whether it is one the store makes itself (a
# fault applies to the caller's call as a whole, as a transaction fails as a whole).
WORKER: contextvars.ContextVar[str] = contextvars.ContextVar("worker", default="")
NESTED: contextvars.ContextVar[bool] = contextvars.ContextVar("nested", default=False)
LEASE = 0.1  # seconds: a stalled worker's claim is taken over, a live one renews in time
SESSIONS = 5
SUBMISSIONS = 40


class Killed(BaseException):
    """A dead worker's store call: nothing it does after its death reaches the store
    (a BaseException, so no `except Exception` of the worker's code goes on with it)."""


def _faulty(name: str, *, landed: bool = True) -> Any:
    """The in-memory store's `name`, through `ChaosStore._call` (`landed`: a write, which
    may land before its outage)."""
    original = getattr(InMemoryExecutionStore, name)

    async def call(self: ChaosStore, *args: Any, **kwargs: Any) -> Any:
        return await self._call(lambda: original(self, *args, **kwargs), landed=landed)

    return call


class ChaosStore(InMemoryExecutionStore):
    """Faults at the workers' store calls, from a seeded random source."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__()
        self.rng = rng
        self.dead: set[str] = set()
        self.stalled: set[str] = set()
        self.quiet = False  # the test's own reads

    async def _fault(self) -> str:
        """ "": none; or "kill", "killed after", "outage", "outage after"."""
        who = WORKER.get()
        if who in self.dead:
            raise Killed(who)
        if self.quiet or not who or NESTED.get():
            return ""
        rng = self.rng
        if rng.random() < 0.01:  # a pause (CPU starvation, a long collection)
            self.stalled.add(who)
            await asyncio.sleep(rng.uniform(0.001, 2 * LEASE))
            self.stalled.discard(who)
        roll = rng.random()
        for fault, odds in (("kill", 0.01), ("killed after", 0.01), ("outage", 0.03)):
            if roll < odds:
                return fault
            roll -= odds
        return "outage after" if roll < 0.03 else ""

    async def _call(self, write: Callable[[], Awaitable[T]], *, landed: bool = True) -> T:
        fault = await self._fault()
        if fault == "kill":
            self.dead.add(WORKER.get())
            raise Killed(WORKER.get())
        if fault == "outage" or (fault == "outage after" and not landed):
            raise StoreUnavailable(f"chaos: {fault}")
        token = NESTED.set(True)
        try:
            result = await write()
        finally:
            NESTED.reset(token)
        if fault == "outage after":
            raise StoreUnavailable("chaos: the write landed, its answer was lost")
        if fault == "killed after":
            self.dead.add(WORKER.get())
            raise Killed(WORKER.get())
        return result

    # Every call a worker makes that changes the store, then its reads.
    append_for = _faulty("append_for")
    settle = _faulty("settle")
    release = _faulty("release")
    renew = _faulty("renew")
    claim = _faulty("claim")
    append_events = _faulty("append_events")
    submission = _faulty("submission", landed=False)
    submission_messages = _faulty("submission_messages", landed=False)
    last_seq = _faulty("last_seq", landed=False)
    events = _faulty("events", landed=False)


class ChaosModel:
    """The process-level suite's model, in process: a tool call or an answer (always an
    answer after a tool result), and now and then a failure, before any text or after
    some; every reply's text and every call id unique."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.count = itertools.count(1)

    def __call__(self, request: ModelRequest) -> Step:
        n, roll = next(self.count), self.rng.random()
        said = [m for m in request.messages if m.role == "user"]
        tag = said[-1].content.split()[-1] if said else "none"
        if roll < 0.05:
            return Step(error=ModelError("retryable", "503", provider="chaos"))
        last = request.messages[-1] if request.messages else None
        calls: tuple[ToolCall, ...] = ()
        if (last is not None and last.role == "tool") or self.rng.random() < 0.5:
            text = f"Answer #{n} to {tag}."
        else:
            text = f"Writing #{n}. "
            calls = (ToolCall(id=f"call_{n}", name="send_email", arguments="{}"),)
        deltas = [text[:4], text[4:]]
        if roll < 0.1:  # the stream drops after its first delta
            error = ModelError("retryable", "dropped", provider="chaos")
            return Step(deltas=deltas, error=error, error_after=1)
        return Step(deltas=deltas, calls=calls)


async def _instantly(_: float) -> None:
    await asyncio.sleep(0)


def _worker_factory(store: ChaosStore, model: ChaosModel, owner: str) -> SessionFactory:
    """One worker process: its own loop (sequence numbers, caches) and Coordinator."""
    tools = DefaultToolRegistry()
    tools.register_tool(CountingTool("send_email", idempotent=False))
    loop = AgentLoop(model=ScriptedModel([model] * 10_000), tools=tools, sessions=store)
    coordinator = Coordinator(
        store,
        owner=owner,
        lease=LEASE,
        backoff=(0.0,),
        max_attempts=1_000,
        dead_owners=lambda owners: [o for o in owners if o in store.dead],
    )
    coordinator.outage = OutagePolicy(sleep=_instantly, random=lambda: 0.5)
    return SessionFactory(loop, store, coordinator)


async def _work(factory: SessionFactory, name: str) -> None:
    WORKER.set(name)
    while True:
        with contextlib.suppress(StoreUnavailable):
            await factory.coordinator.drain_runnable(factory.resolve)
        await asyncio.sleep(0.001)


async def _run(seed: int) -> tuple[ChaosStore, list[str]]:
    """Submit, then run three workers (a dead one replaced) until all is settled."""
    rng = random.Random(seed)
    store, model = ChaosStore(rng), ChaosModel(random.Random(seed + 1))
    keys = [f'agent-session:["local","default","s{i}"]' for i in range(SESSIONS)]
    setup = _worker_factory(store, model, "setup")
    for i in range(SUBMISSIONS):
        session = await setup.get_or_create_root(keys[i % SESSIONS])
        await session.submit(f"question q{i}")
    names = (f"w{i}" for i in itertools.count())

    def start() -> tuple[str, asyncio.Task[None]]:
        name = next(names)
        return name, asyncio.ensure_future(_work(_worker_factory(store, model, name), name))

    workers = dict(start() for _ in range(3))
    gone: list[asyncio.Task[None]] = []
    try:
        for _ in range(30_000):
            await asyncio.sleep(0.001)
            for name in [n for n in workers if n in store.dead]:
                gone.append(workers.pop(name))
                workers.update([start()])
            store.quiet = True
            if all(s.state == "settled" for s in await store.submissions()):
                break
            store.quiet = False
    finally:
        for task in workers.values():
            task.cancel()
        await asyncio.gather(*workers.values(), *gone, return_exceptions=True)
        store.quiet = True
    return store, keys


def _problems(messages: list[Message], subs: list[Submission]) -> list[str]:
    """The process-level suite's transcript checks (`tests/chaos/harness.py`)."""
    found = []
    users = Counter(m.content for m in messages if m.role == "user")
    for sub in subs:
        if sub.state != "settled":
            found.append(f"{sub.input}: not settled")
        if users[sub.input] > 1 or (sub.outcome == "completed" and not users[sub.input]):
            found.append(f"{sub.input}: stored {users[sub.input]} times")
    calls = Counter(c.id for m in messages for c in m.tool_calls)
    results = Counter(m.tool_call_id for m in messages if m.role == "tool")
    if calls != results:
        found.append(f"calls without one result {calls - results}, extra {results - calls}")
    said = Counter(m.content for m in messages if m.role == "assistant" and not m.interrupted)
    found += [f"said twice: {text!r}" for text, n in said.items() if n > 1 and text]
    found += [
        f"{sub.input}: its answer is not in the transcript"
        for sub in subs
        if sub.outcome == "completed" and not said[sub.result or ""]
    ]
    return found


@pytest.mark.parametrize("seed", range(40))
async def test_every_transcript_stays_valid_under_kills_outages_and_stalls(seed: int) -> None:
    store, keys = await _run(seed)
    subs = await store.submissions()
    problems = []
    for key in keys:
        mine = [s for s in subs if s.session_key == key]
        problems += [f"{key}: {p}" for p in _problems(await store.messages(key), mine)]
    assert not problems, "\n".join(problems)
    # The faults happened: workers died and were replaced.
    assert store.dead
