"""One tool call inside the tool step: parse its arguments, let `before_tool_call` block,
change or halt it, run it, then budget and redact the result and let the result hooks
see (and annotate) it. Every failure (unknown tool, bad JSON, `ToolError`, a crash)
becomes an error result the model reads.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from seam.contracts import hooks
from seam.contracts.hooks import AfterToolCall, BeforeToolCall
from seam.contracts.messages import ImagePart, ToolCall
from seam.contracts.tools import Tool, ToolContext, ToolError
from seam.core.hook_registry import fire_isolated, modify_isolated
from seam.core.truncation import truncate_result
from seam.core.turn_deps import ToolDeps, Turn

log = logging.getLogger("seam.loop")

# Streams a notice raised while tools run: (kind, message).
Notify = Callable[[str, str], None]


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """One call's result as the model reads it, and whether a hook asked to halt."""

    content: str
    is_error: bool
    duration_ms: float
    truncated: bool
    halt: str | None = None
    images: tuple[ImagePart, ...] = ()  # a `ToolOutput`'s, for a model that sees images


CANCELLED = ToolOutcome("cancelled before the tool finished", True, 0.0, False)


@dataclass(frozen=True, slots=True)
class CallSite:
    """Where a call runs: the step's dependencies, the turn, the model call that asked
    for it (hooks see its number), and where hook notices go."""

    deps: ToolDeps
    turn: Turn
    iteration: int
    notify: Notify


async def run_one(
    site: CallSite, tool_call: ToolCall, tool: Tool | None, ctx: ToolContext
) -> ToolOutcome:
    """Run one call; every failure becomes an error result (seen by the hooks too)."""
    started = time.perf_counter()
    if tool is None:
        error = f"error: unknown tool {tool_call.name!r}"
        return await _after(site, tool_call, tool_call.arguments, error, True, started)
    args = _arguments(tool_call)
    if isinstance(args, str):
        return await _after(site, tool_call, tool_call.arguments, args, True, started)
    args, blocked, halt = await _before(site, tool_call, args)
    if blocked is not None:
        return await _after(site, tool_call, args, blocked, True, started, halt)
    is_error = False
    try:
        content = await tool.run(args, ctx)
    except ToolError as exc:
        content, is_error = f"error: {exc}", True
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        log.exception("tool %s crashed", tool_call.name)
        content, is_error = f"error: {tool_call.name} failed: {type(exc).__name__}: {exc}", True
    if not isinstance(content, str):
        content = str(content)
    images: tuple[ImagePart, ...] = getattr(content, "images", ())
    outcome = await _after(site, tool_call, args, str(content), is_error, started, halt)
    return replace(outcome, images=images) if images and not is_error else outcome


def _arguments(tool_call: ToolCall) -> dict[str, Any] | str:
    """The call's arguments as a JSON object, or the error the model reads."""
    name = tool_call.name
    try:
        args = json.loads(tool_call.arguments) if tool_call.arguments.strip() else {}
    except json.JSONDecodeError as exc:
        return (
            f"error: arguments for {name} are not valid JSON ({exc.msg} at "
            f"position {exc.pos}); send a JSON object"
        )
    if not isinstance(args, dict):
        return f"error: arguments for {name} must be a JSON object"
    return args


async def _before(
    site: CallSite, tool_call: ToolCall, args: dict[str, Any]
) -> tuple[dict[str, Any], str | None, str | None]:
    """`before_tool_call`: (the arguments to run with, why the call is blocked, why the
    turn halts after this step); None where the hooks said nothing."""
    registry = site.deps.hooks
    if not registry.has(hooks.BEFORE_TOOL_CALL):
        return args, None, None
    turn = site.turn
    payload = BeforeToolCall(
        turn.session_key, turn.turn_id, site.iteration, tool_call.id, tool_call.name, args
    )
    change = await modify_isolated(registry, hooks.BEFORE_TOOL_CALL, payload)
    if change is None:
        return args, None, None
    if change.notice is not None:
        site.notify(change.notice.kind, change.notice.message)
    if change.block is not None:
        return args, f"blocked: {change.block}", change.halt
    if change.arguments is not None:
        args = dict(change.arguments)
    return args, None, change.halt


async def _after(
    site: CallSite,
    tool_call: ToolCall,
    arguments: Mapping[str, Any] | str,
    content: str,
    is_error: bool,
    started: float,
    halt: str | None = None,
) -> ToolOutcome:
    """Budget the result, let hooks see (and annotate) it, and time it."""
    deps = site.deps
    if deps.store.redact is not None:
        content = deps.store.redact(content)
    content, truncated = truncate_result(content, deps.options.result_budget_chars)
    registry = deps.hooks
    watched = registry.has(hooks.AFTER_TOOL_RESULT)
    if watched or registry.has(hooks.AFTER_TOOL_CALL):
        turn = site.turn
        payload = AfterToolCall(
            turn.session_key,
            turn.turn_id,
            site.iteration,
            tool_call.id,
            tool_call.name,
            arguments,
            content,
            is_error,
        )
        if watched:
            payload, halt = await _result_hooks(site, payload, halt)
            content = payload.result
        await fire_isolated(registry, hooks.AFTER_TOOL_CALL, payload)
    duration = (time.perf_counter() - started) * 1000
    return ToolOutcome(content, is_error, duration, truncated, halt)


async def _result_hooks(
    site: CallSite, payload: AfterToolCall, halt: str | None
) -> tuple[AfterToolCall, str | None]:
    """`after_tool_result`: the result the model reads (in the payload) and the halt."""
    change = await modify_isolated(site.deps.hooks, hooks.AFTER_TOOL_RESULT, payload)
    if change is None:
        return payload, halt
    if change.result is not None:
        payload = replace(payload, result=change.result)
    if change.notice is not None:
        site.notify(change.notice.kind, change.notice.message)
    return payload, change.halt if change.halt is not None else halt
