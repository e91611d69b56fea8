"""The approval requests waiting for a person across every session, as the event log
tells them: any process (the one running the turn or not) can list them, and a waiting
request is one whose turn still runs and whose `tool_approval_required` has no
`tool_approval_response` after it. The turns this process runs add their events not
stored yet (`current`: the stream hub's copy), so a request is listed as soon as it is
asked, not only once the recorder has written it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from seam.contracts.events import AgentEvent, ToolApprovalRequired, ToolApprovalResponse
from seam.contracts.execution import RUNNING, EventQuery, ExecutionStore, Submission
from seam.core.event_log import decode

_KINDS = frozenset({ToolApprovalRequired.type, ToolApprovalResponse.type})

Current = Callable[[str], Sequence[AgentEvent]]


def _nothing_live(key: str) -> Sequence[AgentEvent]:
    return ()


@dataclass(frozen=True, slots=True)
class WaitingApproval:
    """One request a person has not answered yet; `since` is when its turn began."""

    session_key: str
    submission_id: str
    call_id: str
    tool: str
    command: str
    reason: str
    since: float


async def waiting_approvals(
    store: ExecutionStore, current: Current = _nothing_live
) -> list[WaitingApproval]:
    """Every unanswered request of a running turn, oldest turn first."""
    out: list[WaitingApproval] = []
    for sub in await store.submissions(None, RUNNING):
        out.extend(await _waiting_in(store, sub, current))
    return out


async def _waiting_in(
    store: ExecutionStore, sub: Submission, current: Current
) -> list[WaitingApproval]:
    """The unanswered requests of one running turn, in the order they were asked."""
    events: dict[int, AgentEvent] = {}
    query = EventQuery(submission_id=sub.id)
    for record in await store.events(sub.session_key, query):
        if record.type in _KINDS:
            events.update((e.seq, e) for e in decode(record))
    stored = {e.turn_id for e in events.values()}
    for event in current(sub.session_key):
        # The hub holds this process's running turn: only a turn the log knows is `sub`'s.
        asked = isinstance(event, (ToolApprovalRequired, ToolApprovalResponse))
        if asked and (not stored or event.turn_id in stored):
            events[event.seq] = event
    open_calls: dict[str, ToolApprovalRequired] = {}
    for _, event in sorted(events.items()):
        if isinstance(event, ToolApprovalRequired):
            open_calls[event.call_id] = event
        elif isinstance(event, ToolApprovalResponse):
            open_calls.pop(event.call_id, None)
    return [
        WaitingApproval(
            sub.session_key, sub.id, e.call_id, e.name, e.command, e.reason, sub.created_at
        )
        for e in open_calls.values()
    ]


__all__ = ["WaitingApproval", "waiting_approvals"]
