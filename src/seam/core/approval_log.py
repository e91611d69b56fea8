"""Where an approval request stands, as the event log tells it: what a process that does
not run the turn reads before it stores a person's answer for the process that does."""

from __future__ import annotations

from typing import Literal

from seam.contracts.events import ToolApprovalRequired, ToolApprovalResponse
from seam.contracts.execution import RUNNING, EventQuery, ExecutionStore
from seam.core.event_log import decode

ApprovalState = Literal["waiting", "answered", "unknown"]

_APPROVAL_TYPES = frozenset({ToolApprovalRequired.type, ToolApprovalResponse.type})


async def approval_state(store: ExecutionStore, key: str, call_id: str) -> ApprovalState:
    """ "waiting", "answered" or "unknown": what the event log of the session's running
    submissions says of `call_id`'s approval request."""
    state: ApprovalState = "unknown"
    for sub in await store.submissions(key, RUNNING):
        for record in await store.events(key, EventQuery(submission_id=sub.id)):
            if record.type not in _APPROVAL_TYPES:
                continue
            for event in decode(record):
                if getattr(event, "call_id", None) != call_id:
                    continue
                # The last word counts: call ids may repeat within a turn.
                if isinstance(event, ToolApprovalRequired):
                    state = "waiting"
                elif isinstance(event, ToolApprovalResponse):
                    state = "answered"
    return state


__all__ = ["ApprovalState", "approval_state"]
