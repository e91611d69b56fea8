"""The approval prompt of the terminal surfaces (`seam chat` and `seam run`): the request
as a person reads it, the prompt, and the answers it accepts. Both commands ask the same
question in the same words; each decides how often to ask and where to read the answer."""

from __future__ import annotations

from seam.contracts.events import ToolApprovalRequired
from seam.contracts.guardrail import ApprovalDecision

APPROVAL_PROMPT = "approve? [o]nce, [s]ession, [a]lways, [d]eny, [n]ever: "
_ANSWERS: dict[str, ApprovalDecision] = {
    "o": "once",
    "once": "once",
    "y": "once",
    "yes": "once",
    "s": "session",
    "session": "session",
    "a": "always",
    "always": "always",
    "d": "deny",
    "deny": "deny",
    "no": "deny",
    "n": "always_deny",
    "never": "always_deny",
}


def parse_approval(answer: str) -> ApprovalDecision | None:
    """A person's answer to the approval prompt; None when it is not one of the choices."""
    return _ANSWERS.get(answer.strip().lower())


def approval_request_text(event: ToolApprovalRequired) -> str:
    return f"{event.name} wants to run: {event.command}\n  why it needs approval: {event.reason}"
