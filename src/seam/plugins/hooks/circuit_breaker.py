"""The tool-loop circuit breaker (the seeds' GuardrailHook).

Small models, and large ones on a bad day, call the same failing tool again and again.
Three counters watch for it, per session and reset at every new turn:

- identical failing calls (same tool, same arguments),
- failures of the same tool (any arguments),
- model steps with no progress (every tool call of the step failed).

At the first ("warn") thresholds the model reads a note appended to the tool result; from
then on an identical failing call is blocked without running; at the hard thresholds the
turn is halted with a `halt` event. A success resets the counters it touches.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from seam.contracts import hooks
from seam.contracts.hooks import (
    AfterToolCall,
    BeforeToolCall,
    HookRegistry,
    ToolCallChange,
    ToolResultChange,
)


@dataclass(frozen=True, slots=True)
class Thresholds:
    identical: int
    same_tool: int
    no_progress: int


WARN = Thresholds(identical=2, same_tool=3, no_progress=2)
HALT = Thresholds(identical=5, same_tool=8, no_progress=5)


@dataclass
class _State:
    turn_id: str = ""
    identical: dict[str, int] = field(default_factory=dict)
    same_tool: dict[str, int] = field(default_factory=dict)
    no_progress: int = 0
    # The step being watched, and whether any of its calls succeeded so far.
    iteration: int = 0
    step_progress: bool = False


def _call_key(name: str, arguments: Any) -> str:
    try:
        args = json.dumps(arguments, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):
        args = str(arguments)
    return f"{name}\x00{args}"


class ToolLoopBreaker:
    def __init__(self, warn: Thresholds = WARN, halt: Thresholds = HALT) -> None:
        self.warn = warn
        self.halt = halt
        self._sessions: dict[str, _State] = {}

    def register(self, registry: HookRegistry) -> None:
        registry.on_modifying(hooks.BEFORE_TOOL_CALL, self.before_tool_call)
        registry.on_modifying(hooks.AFTER_TOOL_RESULT, self.after_tool_result)

    def _state(self, payload: BeforeToolCall | AfterToolCall) -> _State:
        key = payload.session_key
        state = self._sessions.get(key)
        turn_id = payload.turn_id
        if state is None or state.turn_id != turn_id:
            state = self._sessions[key] = _State(turn_id=turn_id)
        iteration = payload.iteration
        if iteration != state.iteration:
            if state.iteration and not state.step_progress:
                state.no_progress += 1
            state.iteration = iteration
            state.step_progress = False
        return state

    async def before_tool_call(self, payload: BeforeToolCall) -> ToolCallChange | None:
        state = self._state(payload)
        count = state.identical.get(_call_key(payload.name, payload.arguments), 0)
        if count >= self.warn.identical:
            return ToolCallChange(
                block=(
                    f"{payload.name} already failed {count} times with these exact arguments;"
                    " change the arguments or try another approach"
                )
            )
        return None

    async def after_tool_result(self, payload: AfterToolCall) -> ToolResultChange | None:
        state = self._state(payload)
        name = payload.name
        key = _call_key(name, payload.arguments)
        if not payload.is_error:
            state.identical.pop(key, None)
            state.same_tool.pop(name, None)
            state.no_progress = 0
            state.step_progress = True
            return None
        identical = state.identical[key] = state.identical.get(key, 0) + 1
        same_tool = state.same_tool[name] = state.same_tool.get(name, 0) + 1
        # This step has failed so far: count it now so the hard limit can stop this step.
        stalled = state.no_progress + (0 if state.step_progress else 1)
        halt = self._halt_reason(name, identical, same_tool, stalled)
        if halt:
            return ToolResultChange(halt=halt)
        warnings = []
        if identical >= self.warn.identical:
            warnings.append(f"this exact call has failed {identical} times")
        if same_tool >= self.warn.same_tool:
            warnings.append(f"{name} has failed {same_tool} times in this turn")
        if stalled >= self.warn.no_progress:
            warnings.append(f"{stalled} steps in a row made no progress")
        if not warnings:
            return None
        note = (
            f"\n\n[circuit breaker: {'; '.join(warnings)}. Do not repeat it: change approach,"
            " or tell the person what is blocking you.]"
        )
        return ToolResultChange(result=f"{payload.result}{note}")

    def _halt_reason(self, name: str, identical: int, same_tool: int, stalled: int) -> str:
        if identical >= self.halt.identical:
            return f"{name} failed {identical} times with the same arguments"
        if same_tool >= self.halt.same_tool:
            return f"{name} failed {same_tool} times in this turn"
        if stalled >= self.halt.no_progress:
            return f"{stalled} model steps in a row made no progress (every tool call failed)"
        return ""
