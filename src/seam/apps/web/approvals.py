"""A person's answer to a waiting approval, whichever process runs the turn.

A turn running here is answered in memory (the fast path). With a store that relays
answers (`ApprovalAnswers`), the answer is stored first, once the call is known to be
waiting: here, or in the event log (a `tool_approval_required` of a running submission
with no response yet), and the process running the turn picks it up from the store. The
first answer stored wins; later ones are a `Conflict`.
"""

from __future__ import annotations

from seam.apps.web.problems import Conflict, Invalid
from seam.contracts.guardrail import ApprovalDecision
from seam.wiring.runtime import Runtime
from seam.wiring.web import approval_state

# The API's answers, as the issue names them, to the gate's decisions.
DECISIONS: dict[str, ApprovalDecision] = {
    "once": "once",
    "session": "session",
    "always": "always",
    "deny": "deny",
    "never": "always_deny",
}


def chosen_decision(decision: str) -> ApprovalDecision:
    """The gate's decision for the API's answer (Invalid for any other word)."""
    chosen = DECISIONS.get(decision)
    if chosen is None:
        raise Invalid(f"decision must be one of {', '.join(DECISIONS)}, not {decision!r}")
    return chosen


async def answer(
    runtime: Runtime, key: str, name: str, call_id: str, chosen: ApprovalDecision
) -> None:
    """Answer `call_id` of session `key` (public name `name`), or raise a `Conflict`."""
    pending = runtime.approvals
    relay = pending.relay
    if relay is None:
        if not runtime.respond_to(key, call_id, chosen):
            raise Conflict(_not_waiting(call_id, name))
        return
    if call_id not in pending.waiting(key):
        state = await approval_state(runtime.store, key, call_id)
        if state == "answered" or await relay.approval_answer(key, call_id) is not None:
            raise Conflict(_already_answered(call_id))
        if state != "waiting":
            raise Conflict(_not_waiting(call_id, name))
    if not await relay.answer_approval(key, call_id, chosen):
        raise Conflict(_already_answered(call_id))
    runtime.respond_to(key, call_id, chosen)  # at once when the turn runs here


def _not_waiting(call_id: str, name: str) -> str:
    return f"no tool call {call_id!r} of session {name!r} is waiting for an answer"


def _already_answered(call_id: str) -> str:
    return f"tool call {call_id!r} was already answered"


__all__ = ["DECISIONS", "answer", "chosen_decision"]
