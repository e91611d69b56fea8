"""Small helpers the conformance suites share (messages, session keys, admission)."""

from __future__ import annotations

from seam.contracts.execution import ExecutionStore, NewSubmission
from seam.contracts.messages import Message
from seam.testing.clock import ManualClock

KEY = 'agent-session:["t","default","main"]'
OTHER = 'agent-session:["t","default","other"]'


def user(text: str) -> Message:
    return Message("user", text)


def assistant(text: str) -> Message:
    return Message("assistant", text)


async def admit(store: ExecutionStore, sid: str, key: str = KEY, text: str = "hi") -> None:
    await store.admit(NewSubmission(sid, key, text))


async def admit_two(store: ExecutionStore, clock: ManualClock, other: str = KEY) -> None:
    """Submission `a` in session KEY, then a second later `b` in `other` (sessions made)."""
    await store.create(KEY)
    if other != KEY:
        await store.create(other)
    await admit(store, "a", KEY)
    clock.advance()
    await admit(store, "b", other)
