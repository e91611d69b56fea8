"""A turn that keeps calling a failing tool is warned, blocked, then halted."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seam.contracts import Halt, ToolContext, ToolEnd, ToolError
from seam.core import AgentLoop, DefaultHookRegistry, DefaultToolRegistry, ScriptedModel
from seam.core.scripted_model import call, text_step, tool_step
from seam.plugins.hooks.circuit_breaker import ToolLoopBreaker


class Flaky:
    name = "fetch"
    description = "fetch a thing"
    parameters: Mapping[str, Any] = {"type": "object", "properties": {"id": {"type": "string"}}}
    concurrent = False
    idempotent = True

    def __init__(self, fail: bool = True) -> None:
        self.fail = fail
        self.runs = 0

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        self.runs += 1
        if self.fail:
            raise ToolError("service unavailable")
        return "ok"


def agent(tool: Flaky, steps: list[Any]) -> tuple[AgentLoop, ScriptedModel]:
    hooks = DefaultHookRegistry()
    ToolLoopBreaker().register(hooks)
    tools = DefaultToolRegistry()
    tools.register_tool(tool)
    model = ScriptedModel(steps)
    return AgentLoop(model=model, tools=tools, hooks=hooks), model


async def test_identical_failing_calls_warn_then_block_then_halt() -> None:
    tool = Flaky()
    loop, model = agent(tool, [tool_step(call("fetch", id="1")) for _ in range(10)])
    events = [e async for e in loop.run("s", "get it")]
    ends = [e for e in events if isinstance(e, ToolEnd)]
    halt = next(e for e in events if isinstance(e, Halt))
    assert halt.reason == "guardrail" and "5 times with the same arguments" in halt.message
    assert events[-1].finish_reason == "halted"
    assert len(ends) == 5 and len(model.requests) == 5
    assert "circuit breaker" in ends[1].result  # warned at the second failure
    assert ends[2].result.startswith("blocked:")  # then the identical call is not run
    assert tool.runs == 2


async def test_failures_of_the_same_tool_halt_at_eight() -> None:
    class Works(Flaky):
        name = "works"

    hooks = DefaultHookRegistry()
    ToolLoopBreaker().register(hooks)
    tools = DefaultToolRegistry()
    tools.register_tool(Flaky())
    tools.register_tool(Works(fail=False))
    # Every step also makes progress elsewhere, so only the per-tool limit can trip.
    steps = [tool_step(call("works"), call("fetch", id=str(i))) for i in range(12)]
    model = ScriptedModel(steps)
    loop = AgentLoop(model=model, tools=tools, hooks=hooks)
    events = [e async for e in loop.run("s", "get them")]
    halt = next(e for e in events if isinstance(e, Halt))
    assert "fetch failed 8 times in this turn" in halt.message
    assert len(model.requests) == 8


async def test_steps_without_progress_halt_at_five() -> None:
    class Other(Flaky):
        name = "other"

    hooks = DefaultHookRegistry()
    ToolLoopBreaker().register(hooks)
    tools = DefaultToolRegistry()
    tools.register_tool(Flaky())
    tools.register_tool(Other())
    # Alternate tools and arguments so neither per-call nor per-tool limits trip first.
    steps = [tool_step(call("fetch" if i % 2 else "other", id=str(i))) for i in range(12)]
    model = ScriptedModel(steps)
    loop = AgentLoop(model=model, tools=tools, hooks=hooks)
    events = [e async for e in loop.run("s", "go")]
    halt = next(e for e in events if isinstance(e, Halt))
    assert "5 model steps in a row made no progress" in halt.message


async def test_a_success_resets_the_counters_and_the_next_turn_starts_fresh() -> None:
    tool = Flaky()
    steps: list[Any] = [tool_step(call("fetch", id="1")) for _ in range(3)]
    steps.append(text_step("gave up"))
    loop, _ = agent(tool, steps)
    events = [e async for e in loop.run("s", "try")]
    assert not any(isinstance(e, Halt) for e in events)
    tool.fail = False
    loop.model.add(tool_step(call("fetch", id="1")), text_step("done"))  # type: ignore[attr-defined]
    events = [e async for e in loop.run("s", "again")]
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert end.result == "ok" and not end.is_error
