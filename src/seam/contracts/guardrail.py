"""Command safety: classification and the approvals a person gives."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

Verdict = Literal["safe", "needs_approval", "forbidden"]
# once: this call; session: same command for the rest of the session; always: saved to
# config; deny: this call; always_deny: remembered and refused from now on; unavailable:
# nobody could answer (no terminal, end of input, a worker): refused, and the model is
# told no one was there rather than that the person said no.
ApprovalDecision = Literal["once", "session", "always", "deny", "always_deny", "unavailable"]
UNAVAILABLE: ApprovalDecision = "unavailable"
APPROVING: frozenset[str] = frozenset({"once", "session", "always"})


@dataclass(frozen=True, slots=True)
class Classification:
    verdict: Verdict
    # The name of the rule that decided: "floor:rm-root", "allow:changes-files" (the first
    # part that could not be proven), or "proof:read" / "proof:run" when every part was.
    rule: str
    reason: str  # one line a person can read; for a proof, each command's ("ls: read")
    normalized: str  # the command as the classifier saw it
    # True only when the guard proved that every simple command in it only reads (ls, cat,
    # grep, ...), and reads nothing that could be secret: no path outside the working
    # directory but harmless system ones, no home directory, no other process's /proc, no
    # environment (env, ps e). Where commands run without isolation, only these run
    # without the person's approval.
    read_only: bool = False


@runtime_checkable
class Guardrail(Protocol):
    def classify(self, command: str, *, cwd: str | None = None) -> Classification:
        """`cwd`: the directory the command would start in, when known (relative paths are
        judged from there)."""
        ...


@runtime_checkable
class Approver(Protocol):
    """Asks the person (through whatever surface runs the turn) to approve a tool call."""

    async def request(
        self, *, call_id: str, tool: str, command: str, reason: str
    ) -> ApprovalDecision: ...


ApprovalMode = Literal["manual", "smart", "off"]
JudgeVerdict = Literal["approve", "deny", "ask"]
# "smart" approval mode: a second model call judges a command that needs approval.
Judge = Callable[[str, Classification], Awaitable[JudgeVerdict]]


@dataclass(frozen=True, slots=True)
class GateDecision:
    allowed: bool
    classification: Classification
    reason: str  # why it was allowed or refused, one line for the model and the person
    decision: ApprovalDecision | None = None  # what the person answered, when asked
    # A person approved this very command: now, or earlier with a remembered answer (not
    # the approval mode, not the judge). Only then may a command change git's controls.
    by_person: bool = False


@runtime_checkable
class CommandGate(Protocol):
    """Decides whether a command may run: classification, remembered approvals, asking.

    Tools that run commands (terminal, execute_code, process) call this and nothing else,
    so every surface gets the same safety rules.
    """

    async def check(
        self,
        command: str,
        *,
        session_key: str,
        tool: str,
        call_id: str,
        approver: Approver | None,
        mode: ApprovalMode,
        isolated: bool = True,
        working_dir: str | None = None,
    ) -> GateDecision:
        """`isolated`: whether the command would run inside a real sandbox. When it would
        not (the local backend), only commands the guard proved read-only run without a
        person's approval, whatever the approval mode says. `working_dir`: where it would
        start, so relative paths are judged."""
        ...
