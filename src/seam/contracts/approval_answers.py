"""Approval answers relayed through the store, so any process can answer a turn another
process runs.

The process running a turn waits for an approval in memory (the fast path: a surface in
the same process answers at once). An answer POSTed to another process (a second `seam
serve` behind a load balancer, a `seam serve` beside a `seam worker` on one SQLite file)
cannot reach that memory, so it is written here, keyed by (session key, call id), and the
waiting process picks it up: at once on PostgreSQL (LISTEN/NOTIFY), within a short poll
on SQLite. The key is unique: the first answer wins and every later one is told the call
was already answered, whichever process it reached. The waiting process writes the answer
it acted on too (one given in its own memory, or `unavailable` when none came), so a late
answer elsewhere is refused rather than silently ignored. Call ids are the model's and may
repeat (a local model numbering every step's calls from 0): a new request clears what an
earlier request with the same id left, before anyone can see it, so nobody can answer it.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class ApprovalAnswers(Protocol):
    """The approval relay: the process running a turn waits here for an answer given in
    another process (the web API, the gateway), and records the one it acted on."""

    async def answer_approval(self, session_key: str, call_id: str, decision: str) -> bool:
        """Store the answer to `call_id`'s approval request; False (and nothing changes)
        when it already has one. Raises `SessionNotFound` for an unknown session."""
        ...

    async def clear_approval(self, session_key: str, call_id: str) -> None:
        """Forget the answer to an earlier request with this call id (a new one is about
        to be asked)."""
        ...

    async def approval_answer(self, session_key: str, call_id: str) -> str | None:
        """The stored answer to `call_id`'s approval request, if any."""
        ...

    async def wait_for_approval_answer(
        self, session_key: str, call_id: str, seconds: float
    ) -> str | None:
        """The answer once one is stored (at once when there is one), or None after
        `seconds` without one."""
        ...


__all__ = ["ApprovalAnswers"]
