"""`GuardedCommandGate`: classification, remembered answers, then asking.

The order is fixed so no surface can get it wrong: the floor refuses; a persisted deny
refuses; a safe command runs; a remembered approval runs; then the approval mode decides
(`off` runs, `smart` asks a judge, `manual` asks the person). Whatever the person answers
is remembered as they asked. Any failure along the way refuses: a gate that cannot decide
says no, with a reason the model and the person can read.

Where commands run without isolation (the local backend), the sandbox is no boundary, so
the gate is the only one: only commands the guard proved read-only run unasked; anything
else waits for a person (or a person's remembered answer), whatever the approval mode
says: "off" means off only inside a real sandbox, and a judge may refuse but not approve.
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import replace
from typing import get_args

from seam.contracts.guardrail import (
    APPROVING,
    UNAVAILABLE,
    ApprovalDecision,
    ApprovalMode,
    Approver,
    Classification,
    GateDecision,
    Guardrail,
    Judge,
    JudgeVerdict,
)
from seam.contracts.tool_approval import nobody_there
from seam.plugins.guardrail.approvals import ApprovalCache, ApprovalFileError

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 300.0  # seconds a person (or the judge) has to answer; silence: no one


NOT_ISOLATED_RULE = "policy:not-isolated"
NOT_ISOLATED_REASON = (
    "commands run without a sandbox here, and only commands proven read-only run unasked"
)
_DECISIONS = frozenset(get_args(ApprovalDecision))
# One simple command: no operator, substitution, redirection or grouping.
_PLAIN = re.compile(r"[^;&|<>$`(){}\n]+")
_REMEMBERED = {
    "once": "approved once, ahead of this call",
    "session": "approved earlier in this session",
    "always": "always approved",
}
_ANSWERED = {
    "once": "the person approved it once",
    "session": "the person approved it for this session",
    "always": "the person approved it for good",
}


def _nobody(found: Classification, why: str, isolated: bool, waited: str = "") -> str:
    """The refusal when no one could be asked (no terminal, a worker, end of input, no
    answer in time): the shared wording, plus the `[guard] allow` entry where it would
    help: inside a sandbox (without one, an allow still asks) and for one plain command
    (an allow covers only the command it matches, not others chained to it)."""
    command = found.normalized
    allow = ""
    if isolated and _PLAIN.fullmatch(command) and not found.rule.startswith("floor"):
        quoted = command.replace("\\", "\\\\").replace('"', '\\"')
        allow = f'add [guard] allow = ["{quoted}"] to config.toml'
    return nobody_there(f"{command!r} ({why}){waited}", also=allow)


class GuardedCommandGate:
    """Implements `CommandGate`.

    `allow_off`: whether mode "off" is honoured; False (for personalities that take
    messages from chat gateways) turns "off" into "manual". `timeout` bounds both the
    person's answer and the judge's.
    """

    def __init__(
        self,
        guardrail: Guardrail,
        approvals: ApprovalCache,
        *,
        judge: Judge | None = None,
        allow_off: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        if timeout <= 0:
            raise ValueError(f"approval timeout must be positive, got {timeout}")
        self._guardrail = guardrail
        self._approvals = approvals
        self._judge = judge
        self._allow_off = allow_off
        self._timeout = timeout

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
        found = self._classify(command, isolated, working_dir)
        if found.verdict == "forbidden":
            why = f"{found.reason} ({found.rule})"
            return GateDecision(False, found, f"refused: {why}; this is never allowed")
        known = self._known(found, session_key)
        if known is not None:
            return known
        why = f"{found.reason} ({found.rule})"
        if mode == "off" and self._allow_off and isolated:
            return GateDecision(True, found, f"allowed without asking (approval mode off): {why}")
        if mode == "smart":
            verdict = await self._ask_judge(command, found)
            if verdict == "approve" and isolated:
                return GateDecision(True, found, f"allowed by the approval judge: {why}")
            if verdict == "deny":
                return GateDecision(False, found, f"refused by the approval judge: {why}")
        return await self._ask_person(found, session_key, tool, call_id, approver, isolated)

    def _classify(self, command: str, isolated: bool, working_dir: str | None) -> Classification:
        """The guard's classification; without isolation, only a read-only proof is safe."""
        if working_dir:
            found = self._guardrail.classify(command, cwd=working_dir)
        else:
            found = self._guardrail.classify(command)
        if not isolated and found.verdict == "safe" and not found.read_only:
            found = replace(
                found, verdict="needs_approval", rule=NOT_ISOLATED_RULE, reason=NOT_ISOLATED_REASON
            )
        return found

    def _known(self, found: Classification, session_key: str) -> GateDecision | None:
        """The decision already known without asking: a persisted deny, a safe command, a
        remembered approval (or saved approvals that cannot be read); None when not."""
        key = found.normalized
        try:
            if found.verdict == "safe":
                remembered = "always_deny" if self._approvals.is_denied(key) else None
            else:
                remembered = self._approvals.consume(session_key, key)
        except ApprovalFileError as exc:
            return GateDecision(False, found, f"refused: saved approvals cannot be read: {exc}")
        if remembered == "always_deny":
            return GateDecision(False, found, "refused: the person chose to always deny this")
        if found.verdict == "safe":
            return GateDecision(True, found, f"allowed: {found.reason} ({found.rule})")
        if remembered is not None:
            reason = f"allowed: {_REMEMBERED[remembered]}"
            return GateDecision(True, found, reason, by_person=True)
        return None

    async def _ask_judge(self, command: str, found: Classification) -> JudgeVerdict:
        """The judge's verdict; no judge, an error, a timeout or nonsense mean "ask"."""
        if self._judge is None:
            return "ask"
        try:
            async with asyncio.timeout(self._timeout):
                verdict = await self._judge(command, found)
        except Exception as exc:  # the judge is a model call: any failure means ask
            log.warning("approval judge failed, asking the person: %s", exc)
            return "ask"
        return verdict if verdict in ("approve", "deny") else "ask"

    async def _ask_person(
        self,
        found: Classification,
        session_key: str,
        tool: str,
        call_id: str,
        approver: Approver | None,
        isolated: bool = True,
    ) -> GateDecision:
        why = f"{found.reason} ({found.rule})"
        if approver is None:
            return GateDecision(False, found, _nobody(found, why, isolated))
        try:
            async with asyncio.timeout(self._timeout):
                answer = await approver.request(
                    call_id=call_id, tool=tool, command=found.normalized, reason=why
                )
        except TimeoutError:
            waited = f" within {self._timeout:g} s"
            return GateDecision(False, found, _nobody(found, why, isolated, waited))
        except Exception as exc:  # the surface went away: nobody approved it
            return GateDecision(False, found, f"refused: asking for approval failed ({exc})")
        if answer not in _DECISIONS:
            return GateDecision(False, found, f"refused: unrecognised answer {answer!r}")
        if answer == UNAVAILABLE:
            # Not a "no": nobody was there to ask. The model must not read it as a refusal
            # by the person (and nothing is remembered).
            return GateDecision(False, found, _nobody(found, why, isolated), answer)
        note = self._remember(session_key, found.normalized, answer)
        if answer in APPROVING:
            reason = f"allowed: {_ANSWERED[answer]}{note}"
            return GateDecision(True, found, reason, answer, by_person=True)
        denied = "always denies it" if answer == "always_deny" else "denied it"
        return GateDecision(False, found, f"refused: the person {denied}{note}", answer)

    def _remember(self, session_key: str, command: str, answer: ApprovalDecision) -> str:
        """Record the answer (`once` and `deny` concern this call only); returns a note for
        the reason when it could not be saved."""
        if answer in ("once", "deny"):
            return ""
        try:
            self._approvals.cache(session_key, command, answer)
        except ApprovalFileError as exc:
            log.warning("could not remember an approval: %s", exc)
            return f" (not remembered: {exc})"
        return ""
