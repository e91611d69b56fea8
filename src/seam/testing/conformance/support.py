"""Small helpers the conformance suites share (messages, session keys, admission)."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence

import pytest

from seam.contracts.execution import ExecutionStore, NewSubmission
from seam.contracts.messages import Message
from seam.contracts.sessions import SessionNotFound, SessionStore
from seam.testing.clock import ManualClock

KEY = 'agent-session:["t","default","main"]'
OTHER = 'agent-session:["t","default","other"]'


async def refuses_unknown(call: Awaitable[object]) -> None:
    """`call`, made for the session "ghost-key" (which does not exist), raises
    SessionNotFound naming it: every store method that needs the session says which."""
    with pytest.raises(SessionNotFound, match="ghost-key"):
        await call


async def rejects(call: Awaitable[object], argument: str) -> None:
    """`call` raises ValueError naming the `argument` it refuses (a negative limit, ...)."""
    with pytest.raises(ValueError, match=argument):
        await call


def user(text: str) -> Message:
    return Message("user", text)


def assistant(text: str) -> Message:
    return Message("assistant", text)


async def session_with(store: SessionStore, key: str, messages: Sequence[Message]) -> None:
    """A new session `key` holding `messages` (what most transcript tests start from)."""
    await store.create(key)
    await store.append(key, messages)


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
