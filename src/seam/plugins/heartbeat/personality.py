"""The heartbeat's lean personality: the checklist as its whole soul, and nothing else.

A beat runs through the ordinary durable path (a submission the Coordinator drives, in a
session the SessionFactory builds), so the only way to keep its prompt small is what the
personality gives the prompt builder. `heartbeat` has the checklist (plus four lines on
how to answer) as its soul, no tools (unless `[heartbeat] tools` names some), and no file
reach, so project files such as AGENTS.md are not read into it. The prompt is then the
soul, the memory snapshot, and the beat's one user message. Model and approval mode are
the base personality's (`[heartbeat] personality`, else the default).

The registry wrapper resolves `heartbeat` in every runtime built from the settings, so a
beat submitted by one process is run the same way by any worker; it is not listed with
the person's personalities.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from seam.contracts.personality import Personality, PersonalityRegistry
from seam.plugins.heartbeat.reply import HEARTBEAT_OK

HEARTBEAT_PERSONALITY = "heartbeat"
# Base personality id -> its checklist text (None or "": no checklist, the beat skips).
Checklist = Callable[[str], str | None]

HEARTBEAT_SOUL = f"""\
This is a heartbeat: you are checking in on your own; nobody wrote to you.
Go through the checklist below with what you know (your memory).
If nothing needs the person's attention, reply with exactly {HEARTBEAT_OK} and nothing else.
Otherwise reply only with what they need to know, in a few lines: it is sent to them.

## Checklist
"""


def heartbeat_soul(checklist: str) -> str:
    return HEARTBEAT_SOUL + checklist.strip() + "\n"


class HeartbeatPersonalities:
    """`inner` plus the `heartbeat` personality (see the module doc)."""

    def __init__(
        self,
        inner: PersonalityRegistry,
        checklist: Checklist,
        *,
        base: str | None = None,
        tools: Sequence[str] = (),
    ) -> None:
        self._inner = inner
        self.checklist = checklist
        self.base = base or None
        self.tools = tuple(tools)

    @property
    def default_id(self) -> str:
        return self._inner.default_id

    def get(self, personality_id: str) -> Personality:
        if personality_id == HEARTBEAT_PERSONALITY:
            return self.personality()
        return self._inner.get(personality_id)

    def list(self) -> list[Personality]:
        return self._inner.list()

    def base_personality(self) -> Personality:
        return self._inner.get(self.base or self._inner.default_id)

    def checklist_text(self) -> str:
        return (self.checklist(self.base_personality().id) or "").strip()

    def personality(self) -> Personality:
        base = self.base_personality()
        return Personality(
            id=HEARTBEAT_PERSONALITY,
            soul=heartbeat_soul(self.checklist(base.id) or ""),
            name="heartbeat",
            description=f"the heartbeat of {base.id}",
            model=base.model,
            fallback=base.fallback,
            toolset=self.tools,
            fs_read=(),
            fs_write=(),
            approval_mode=base.approval_mode,
            network=False,
        )

    def __getattr__(self, name: str) -> Any:  # anything else the wrapped registry offers
        return getattr(self._inner, name)
