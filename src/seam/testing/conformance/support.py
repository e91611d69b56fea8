"""Small helpers the conformance suites share (messages, session keys, admission)."""

from __future__ import annotations

from seam.contracts.execution import ExecutionStore, NewSubmission
from seam.contracts.messages import Message

KEY = 'agent-session:["t","default","main"]'
OTHER = 'agent-session:["t","default","other"]'


def user(text: str) -> Message:
    return Message("user", text)


def assistant(text: str) -> Message:
    return Message("assistant", text)


async def admit(store: ExecutionStore, sid: str, key: str = KEY, text: str = "hi") -> None:
    await store.admit(NewSubmission(sid, key, text))
