"""Approvals as buttons: a command that needs approval is shown with five answers, and
only the session's owner may press one.

The owner of a turn is the user whose message started it (in a private chat, the chat
itself). A press by anyone else is refused with "not yours" and changes nothing; the
owner's press answers the turn through `Runtime.respond_to`. Requests live in memory:
after a restart the turn that asked is repaired and asks again.

Always and Never change the allowlists every session uses, so they are the owner's alone:
a paired user's turn shows Once, This session and Deny only, and a press of a lasting
answer by anyone the config does not name (a crafted callback) is refused.
"""

from __future__ import annotations

import secrets
from collections.abc import Collection
from dataclasses import dataclass

from seam.contracts.chat import Button, ChatRef
from seam.contracts.guardrail import ApprovalDecision

# (button label, the answer's name in button data, the gate's decision)
ANSWERS: tuple[tuple[str, str, ApprovalDecision], ...] = (
    ("Once", "once", "once"),
    ("This session", "session", "session"),
    ("Always", "always", "always"),
    ("Deny", "deny", "deny"),
    ("Never", "never", "always_deny"),
)
DECISIONS = {name: decision for _, name, decision in ANSWERS}
# The answers that change the rules for everyone, and why a paired user is refused them.
LASTING = frozenset({"always", "never"})
LASTING_REFUSAL = "Only the owner answers Always or Never: they change the rules for everyone."
LABELS = {name: label for label, name, _ in ANSWERS}
PREFIX = "ap:"


@dataclass
class Pending:
    session_key: str
    call_id: str
    chat: ChatRef
    owners: frozenset[str]
    text: str
    message_id: str | None = None


class Approvals:
    def __init__(self) -> None:
        self._pending: dict[str, Pending] = {}

    def add(
        self,
        session_key: str,
        call_id: str,
        chat: ChatRef,
        owners: Collection[str],
        text: str,
        *,
        lasting: bool = True,
    ) -> tuple[str, list[list[Button]]]:
        """Register a request; its id and the buttons to show (data `ap:<id>:<answer>`,
        well within Telegram's 64 bytes); `lasting`: offer Always and Never too."""
        rid = secrets.token_hex(4)
        self._pending[rid] = Pending(session_key, call_id, chat, frozenset(owners), text)
        row = [
            Button(label, f"{PREFIX}{rid}:{name}")
            for label, name, _ in ANSWERS
            if lasting or name not in LASTING
        ]
        return rid, [row[:3], row[3:]] if lasting else [row]

    def shown(self, rid: str, message_id: str) -> None:
        if rid in self._pending:
            self._pending[rid].message_id = message_id

    def get(self, data: str) -> tuple[str, Pending | None, str | None]:
        """(request id, the request or None when unknown/expired, the answer name)."""
        if not data.startswith(PREFIX):
            return "", None, None
        rid, _, answer = data[len(PREFIX) :].partition(":")
        return rid, self._pending.get(rid), answer if answer in DECISIONS else None

    def done(self, rid: str) -> None:
        self._pending.pop(rid, None)


def prompt_text(command: str, reason: str) -> str:
    shown = command if len(command) <= 1500 else command[:1500] + " …"
    return f"May I run this?\n\n```\n{shown}\n```\n{reason}".strip()
