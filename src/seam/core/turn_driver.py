"""Preparing a turn and driving its steps (see `core/turn.py` for the state machine).

`prepare_turn` resolves what the turn depends on into a `TurnDeps` (personality read
fresh every turn for hot reload, the session's stored tool names and model, the toolset
built over a fresh `ToolContext`, the system prompt with `before_prompt_build` applied)
and loads the history into a new `TurnState`. `run_turn` then runs steps from the one it
is given until a step leaves none: the one generator a consumer iterates.
`/compress` and `/usage` prepare the same values without a turn (`prepare_context`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from seam.contracts import hooks
from seam.contracts.context import ContextUsage
from seam.contracts.events import AgentEvent, Done, ErrorEvent
from seam.contracts.hooks import BeforePromptBuild, SessionStart
from seam.contracts.personality import Personality
from seam.contracts.sessions import SessionInfo
from seam.contracts.tools import CancelToken, Subagents
from seam.core.context_step import build_system, compact, estimate, load_history, window
from seam.core.hook_registry import fire_isolated, modify_isolated
from seam.core.model_step import UserPrompt
from seam.core.turn import (
    TranscriptWriter,
    TurnDeps,
    TurnState,
    TurnStep,
    UnknownPersonality,
    flush,
    open_turn,
    save_partial,
)

if TYPE_CHECKING:
    from seam.core.loop import AgentLoop


def _personality(loop: AgentLoop, info: SessionInfo | None, chosen: str | None) -> Personality:
    try:
        personality = loop.personality_for(chosen or (info.personality if info else None))
    except KeyError as exc:  # the registry's message names the id and the known ones
        raise UnknownPersonality(str(exc.args[0] if exc.args else exc)) from None
    if info is not None and info.model:  # the session's own model, over the personality's
        personality = replace(personality, model=info.model)
    return personality


async def _prepare_tools(loop: AgentLoop, names: Sequence[str] | None) -> None:
    """A registry with run-time tool sources (MCP servers) learns their tools first; the
    first turn that offers a server's tools starts it (see `DefaultToolRegistry.prepare`)."""
    prepare: Callable[[Sequence[str] | None], Awaitable[None]] | None = getattr(
        loop.tools, "prepare", None
    )
    if prepare is not None:
        await prepare(names)


async def prepare_turn(
    loop: AgentLoop,
    session_key: str,
    turn_id: str,
    *,
    user_message: str | None,
    personality: str | None,
    cancel: CancelToken,
    transcript: TranscriptWriter | None,
    subagents: Subagents | None,
) -> tuple[TurnDeps, TurnState]:
    """What a turn depends on and where it starts; creates the session on first use."""
    registry = loop.hooks
    info = await loop.sessions.get(session_key)
    chosen = _personality(loop, info, personality)
    if info is None:
        info = await loop.sessions.create(session_key, personality=chosen.id)
        if registry.has(hooks.SESSION_START):
            payload = SessionStart(session_key, chosen.id)
            await fire_isolated(registry, hooks.SESSION_START, payload)
    state = TurnState(messages=[], seq=loop.sequences.last(session_key))
    ctx = loop.tool_context(
        session_key, chosen, turn_id=turn_id, cancel=cancel, subagents=subagents
    )
    names = info.tools if info.tools is not None else chosen.toolset
    await _prepare_tools(loop, names)
    tools = loop.tools.build(names, ctx)
    system = await build_system(loop, session_key, turn_id, chosen, tools, ctx, state)
    if registry.has(hooks.BEFORE_PROMPT_BUILD):
        prompt = BeforePromptBuild(session_key, system, user_message or "")
        change = await modify_isolated(registry, hooks.BEFORE_PROMPT_BUILD, prompt)
        if change is not None:
            if change.system is not None:
                system = change.system
            if change.append_system is not None:
                system = f"{system}\n\n{change.append_system}"
    state.messages = await load_history(loop, session_key)
    deps = TurnDeps(
        loop=loop,
        session_key=session_key,
        turn_id=turn_id,
        cancel=cancel,
        personality=chosen,
        model=loop.model_for(chosen),
        tools={tool.name: tool for tool in tools},
        definitions=loop.tools.definitions(tools),
        ctx=ctx,
        system=system,
        transcript=transcript,
    )
    return deps, state


async def run_turn(
    loop: AgentLoop,
    session_key: str,
    start: TurnStep,
    *,
    personality: str | None,
    cancel: CancelToken,
    transcript: TranscriptWriter | None,
    subagents: Subagents | None,
) -> AsyncGenerator[AgentEvent, None]:
    """Prepare the turn, then run its steps from `start`; always ends with `done`."""
    turn_id = loop.new_id()
    missing = await missing_working_dir(loop, session_key)
    if missing is not None:
        seq = loop.sequences.last(session_key)
        loop.sequences.record(session_key, seq + 2)
        yield ErrorEvent(session_key, turn_id, seq + 1, "working_dir", missing)
        yield Done(session_key, turn_id, seq + 2, "", "error")
        return
    try:
        deps, state = await prepare_turn(
            loop,
            session_key,
            turn_id,
            user_message=start.text if isinstance(start, UserPrompt) else None,
            personality=personality,
            cancel=cancel,
            transcript=transcript,
            subagents=subagents,
        )
    except UnknownPersonality as exc:
        seq = loop.sequences.last(session_key)
        loop.sequences.record(session_key, seq + 2)
        yield ErrorEvent(session_key, turn_id, seq + 1, "personality", str(exc))
        yield Done(session_key, turn_id, seq + 2, "", "error")
        return
    step: TurnStep | None = start
    try:
        while step is not None:
            if step.opens_turn and not state.started:
                for event in open_turn(deps, state, None):
                    yield event
            state.next = None
            events = step.run(deps, state)
            try:
                async for event in events:
                    yield event
            finally:
                await events.aclose()  # a consumer that stops early ends the step now
            step = state.next
    except (asyncio.CancelledError, GeneratorExit):
        await save_partial(deps, state)
        raise
    finally:
        loop.sequences.record(session_key, state.seq)


async def missing_working_dir(loop: AgentLoop, session_key: str) -> str | None:
    """Why the session cannot run where its stored spec says (None: it can). Only a
    directory restored from the store is checked: a resumed turn never silently runs
    in this process's directory instead of the project it started in."""
    if session_key not in loop.restored_dirs:
        return None
    path = loop.working_dir_for(session_key)
    if await loop.storage.exists(path):
        return None
    return f"the session's working directory {path} no longer exists"


# -- outside a turn: /compress and /usage --


async def prepare_context(
    loop: AgentLoop, session_key: str, personality: str | None
) -> tuple[TurnDeps, TurnState] | None:
    """The turn values as the session's next turn would see them, without running one
    (no hooks fire, nothing is stored); None when there is no such session."""
    info = await loop.sessions.get(session_key)
    if info is None:
        return None
    chosen = _personality(loop, info, personality)
    turn_id = loop.new_id()
    state = TurnState(messages=[], seq=loop.sequences.last(session_key))
    ctx = loop.tool_context(session_key, chosen, turn_id=turn_id)
    names = info.tools if info.tools is not None else chosen.toolset
    await _prepare_tools(loop, names)
    tools = loop.tools.build(names, ctx)
    system = await build_system(loop, session_key, turn_id, chosen, tools, ctx, state)
    deps = TurnDeps(
        loop=loop,
        session_key=session_key,
        turn_id=turn_id,
        cancel=ctx.cancel,
        personality=chosen,
        model=loop.model_for(chosen),
        tools={tool.name: tool for tool in tools},
        definitions=loop.tools.definitions(tools),
        ctx=ctx,
        system=system,
    )
    return deps, state


async def compact_now(
    loop: AgentLoop, session_key: str, personality: str | None
) -> list[AgentEvent]:
    """Compact the session's history now (prune and summarise); the events it made."""
    prepared = await prepare_context(loop, session_key, personality)
    if prepared is None:
        return []
    deps, state = prepared
    await compact(deps, state, deps.system, "manual")
    events = flush(state)
    loop.sequences.continue_after(session_key, state.seq)
    return events


async def measure(
    loop: AgentLoop, session_key: str, personality: str | None
) -> ContextUsage | None:
    """Estimated size of the session's next request against the context window."""
    prepared = await prepare_context(loop, session_key, personality)
    if prepared is None:
        return None
    deps, state = prepared
    if state.waiting:
        # Notices belong to the next real turn: forget the files read for this
        # estimate, so that turn reads them again and reports what it finds.
        state.waiting = []
        loop.context.invalidate(session_key)
    history = await load_history(loop, session_key)
    tokens = estimate(deps, state, deps.system, deps.definitions, history)
    return ContextUsage(tokens, window(loop, deps.model))
