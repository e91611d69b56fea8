"""Hooks: the three kinds from the seeds.

- void hooks fan out; a failing handler is logged and never breaks a turn;
- modifying hooks run in registration order; per key, the first non-None value wins;
- claiming hooks run in order; the first one that returns handled=True wins.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

# Void hook names fired by the loop.
SESSION_START = "session_start"
BEFORE_LLM_CALL = "before_llm_call"
AFTER_LLM_CALL = "after_llm_call"
AFTER_TOOL_CALL = "after_tool_call"
AGENT_DONE = "agent_done"
SUBAGENT_SPAWNED = "subagent_spawned"
# Modifying hook names.
BEFORE_PROMPT_BUILD = "before_prompt_build"
# May return {"block": reason} (the call is not run), {"arguments": {...}}, {"halt": reason}.
BEFORE_TOOL_CALL = "before_tool_call"
# May return {"result": text} (replaces what the model reads), {"notice": (kind, message)}
# (streamed as a `notice` event) and {"halt": reason}, which ends the turn with a `halt`
# event once this step's results are stored.
AFTER_TOOL_RESULT = "after_tool_result"
# Claiming hook names.
INBOUND_CLAIM = "inbound_claim"

Payload = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ClaimResult:
    handled: bool
    reply: str | None = None


VoidHandler = Callable[[Payload], Awaitable[None]]
ModifyingHandler = Callable[[Payload], Awaitable[Mapping[str, Any] | None]]
ClaimingHandler = Callable[[Payload], Awaitable[ClaimResult | None]]


class HookRegistry(Protocol):
    def on_void(self, name: str, handler: VoidHandler) -> None: ...

    def on_modifying(self, name: str, handler: ModifyingHandler) -> None: ...

    def on_claiming(self, name: str, handler: ClaimingHandler) -> None: ...

    def has(self, name: str) -> bool:
        """Cheap check so the loop builds no payload for hooks nobody listens to."""
        ...

    async def fire_void(self, name: str, payload: Payload) -> None: ...

    async def fire_modifying(self, name: str, payload: Payload) -> dict[str, Any]: ...

    async def fire_claiming(self, name: str, payload: Payload) -> ClaimResult | None: ...
