"""Command safety: classification and the approvals a person gives."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

Verdict = Literal["safe", "needs_approval", "forbidden"]
# once: this call; session: same command for the rest of the session; always: saved to
# config; deny: this call; always_deny: remembered and refused from now on.
ApprovalDecision = Literal["once", "session", "always", "deny", "always_deny"]
APPROVING: frozenset[str] = frozenset({"once", "session", "always"})


@dataclass(frozen=True, slots=True)
class Classification:
    verdict: Verdict
    rule: str  # the name of the rule that decided, e.g. "floor:rm-root" or "default:safe"
    reason: str  # one line a person can read
    normalized: str  # the command as the classifier saw it


@runtime_checkable
class Guardrail(Protocol):
    def classify(self, command: str) -> Classification: ...


@runtime_checkable
class Approver(Protocol):
    """Asks the person (through whatever surface runs the turn) to approve a tool call."""

    async def request(
        self, *, call_id: str, tool: str, command: str, reason: str
    ) -> ApprovalDecision: ...
