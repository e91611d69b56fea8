"""Preparing a turn and driving its steps (see `core/turn.py` for the state machine).

`prepare_turn` resolves what the turn is about into a `Turn` (personality read fresh
every turn for hot reload, the session's stored tool names and model, the toolset built
over a fresh `ToolContext`, the system prompt with `before_prompt_build` applied) and
loads the history into the first `TurnState`; it reads the session row once. `run_turn`
then runs steps from the one it is given until a state has none: the one generator a
consumer iterates. `/compress` and `/usage` prepare the same values without a turn
(`prepare_context`). Everything here works from `SetupDeps`, never the loop itself.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import replace

from seam.contracts import hooks
from seam.contracts.context import ContextUsage
from seam.contracts.events import AgentEvent, Done, ErrorEvent
from seam.contracts.hooks import BeforePromptBuild, SessionStart
from seam.contracts.personality import Personality
from seam.contracts.sessions import NewSession, SessionInfo
from seam.contracts.tools import ToolContext, ToolRegistry
from seam.core.context_step import (
    build_system,
    compact,
    estimate,
    load_history,
    request_view,
    window,
)
from seam.core.external_calls import with_extras
from seam.core.hook_registry import fire_isolated, modify_isolated
from seam.core.model_step import UserPrompt
from seam.core.turn import UnknownPersonality, flush, open_turn
from seam.core.turn_deps import (
    Pending,
    SetupDeps,
    StepEnd,
    TranscriptWriter,
    Turn,
    TurnRequest,
    TurnState,
)


async def run_turn(setup: SetupDeps, request: TurnRequest) -> AsyncGenerator[AgentEvent, None]:
    """Prepare the turn, then run its steps from `request.start`; always ends with `done`.

    A step yields its events and ends by raising `StepEnd(next_state)`: the driver
    passes the events on untouched and keeps the state. The last event sent is what the
    session's numbering goes on from, also when the consumer stops mid-step."""
    turn_id = setup.new_id()
    prepared = await _begin(setup, request, turn_id)
    if isinstance(prepared, list):  # refused before any step: an error and `done`
        for event in prepared:
            yield event
        return
    turn, state = prepared
    services = setup.services
    last: AgentEvent | None = None  # the last event sent: numbering goes on after it
    try:
        while (step := state.step) is not None:
            if step.opens_turn and not state.started:
                events, state = open_turn(turn, state, None)
                for last in events:
                    yield last
            outputs = step.run(services, turn, state)
            try:
                async for last in outputs:
                    yield last
            except StepEnd as end:  # the step is over: nothing to close
                state = end.state
                continue
            except BaseException:
                await outputs.aclose()  # a consumer that stops early ends the step now
                raise
            await outputs.aclose()
            raise RuntimeError(f"{step!r} ended without the turn's next state")
    finally:
        seq = state.seq if last is None else max(state.seq, last.seq)
        setup.sequences.record(turn.session_key, seq)


async def _begin(
    setup: SetupDeps, request: TurnRequest, turn_id: str
) -> tuple[Turn, TurnState] | list[AgentEvent]:
    """The prepared turn at its start, or the events of a turn refused before it starts
    (its restored working directory is gone, its personality is unknown)."""
    missing = await setup.missing_dir(request.session_key)
    if missing is not None:
        return _refused(setup, request.session_key, turn_id, "working_dir", missing)
    try:
        return await prepare_turn(setup, request, turn_id)
    except UnknownPersonality as exc:
        return _refused(setup, request.session_key, turn_id, "personality", str(exc))


def _refused(
    setup: SetupDeps, session_key: str, turn_id: str, kind: str, message: str
) -> list[AgentEvent]:
    seq = setup.sequences.last(session_key)
    setup.sequences.record(session_key, seq + 2)
    return [
        ErrorEvent(session_key, turn_id, seq + 1, kind, message),
        Done(session_key, turn_id, seq + 2, "", "error"),
    ]


async def prepare_turn(
    setup: SetupDeps, request: TurnRequest, turn_id: str
) -> tuple[Turn, TurnState]:
    """What a turn is about and where it starts; creates the session on first use.

    The session's row and its transcript are read together (`load`: one round trip on
    PostgreSQL, one read on SQLite's reader thread, and they agree) instead of a `get`
    now and a `messages` after the prompt is built: nothing in between writes the
    transcript (the prompt hooks change the system prompt only). A session made here
    is read again after `session_start`, whose handlers may write to it."""
    key = request.session_key
    loaded = await setup.sessions.load(key)
    info = loaded.info if loaded is not None else None
    chosen = _personality(setup, info, request.personality, key)
    if info is None:
        info = await setup.sessions.create(key, NewSession(personality=chosen.id))
        if setup.hooks.has(hooks.SESSION_START):
            await fire_isolated(setup.hooks, hooks.SESSION_START, SessionStart(key, chosen.id))
    ctx = setup.tool_context(
        key, chosen, turn_id=turn_id, cancel=request.cancel, subagents=request.subagents
    )
    start = request.start
    said = start.text if isinstance(start, UserPrompt) else None
    turn, notices = await _resolve(
        setup, info, chosen, ctx, request.transcript, lambda s: _prompt_hook(setup, key, s, said)
    )
    turn = with_extras(turn, request.extras)
    context = setup.services.context
    if loaded is None:
        history = await load_history(context, key)
    else:
        history = request_view(context.options, loaded.messages)
    seq = setup.sequences.last(key)
    return turn, TurnState(step=start, messages=history, seq=seq, waiting=notices)


async def _prompt_hook(
    setup: SetupDeps, session_key: str, system: str, user_message: str | None
) -> str:
    """The system prompt as `before_prompt_build` leaves it (replaced or added to)."""
    if not setup.hooks.has(hooks.BEFORE_PROMPT_BUILD):
        return system
    prompt = BeforePromptBuild(session_key, system, user_message or "")
    change = await modify_isolated(setup.hooks, hooks.BEFORE_PROMPT_BUILD, prompt)
    if change is not None:
        if change.system is not None:
            system = change.system
        if change.append_system is not None:
            system = f"{system}\n\n{change.append_system}"
    return system


async def _resolve(
    setup: SetupDeps,
    info: SessionInfo,
    chosen: Personality,
    ctx: ToolContext,
    transcript: TranscriptWriter | None = None,
    adjust: Callable[[str], Awaitable[str]] | None = None,
) -> tuple[Turn, tuple[Pending, ...]]:
    """The session's toolset built over `ctx` and its system prompt (as `adjust` leaves
    it), as a `Turn`; and the prompt builder's notices, which wait for `run_start`."""
    key = ctx.session_key
    names = info.tools if info.tools is not None else chosen.toolset
    await _prepare_tools(setup.tools, names)
    tools = setup.tools.build(names, ctx)
    system, notices = await build_system(
        setup.services.context, key, ctx.turn_id, chosen, tools, ctx
    )
    if adjust is not None:
        system = await adjust(system)
    turn = Turn(
        session_key=key,
        turn_id=ctx.turn_id,
        cancel=ctx.cancel,
        personality=chosen,
        model=setup.model_for(chosen),
        tools={tool.name: tool for tool in tools},
        definitions=setup.tools.definitions(tools),
        ctx=ctx,
        system=system,
        transcript=transcript,
    )
    return turn, notices


def _personality(
    setup: SetupDeps, info: SessionInfo | None, chosen: str | None, key: str
) -> Personality:
    try:
        personality = setup.personality_for(chosen or (info.personality if info else None), key)
    except KeyError as exc:  # the registry's message names the id and the known ones
        raise UnknownPersonality(str(exc.args[0] if exc.args else exc)) from None
    if info is not None and info.model:  # the session's own model, over the personality's
        personality = replace(personality, model=info.model)
    return personality


async def _prepare_tools(registry: ToolRegistry, names: Sequence[str] | None) -> None:
    """A registry with run-time tool sources (MCP servers) learns their tools first; the
    first turn that offers a server's tools starts it (see `DefaultToolRegistry.prepare`)."""
    prepare: Callable[[Sequence[str] | None], Awaitable[None]] | None = getattr(
        registry, "prepare", None
    )
    if prepare is not None:
        await prepare(names)


# -- outside a turn: /compress and /usage --


async def prepare_context(
    setup: SetupDeps, session_key: str, personality: str | None
) -> tuple[Turn, TurnState] | None:
    """The turn values as the session's next turn would see them, without running one
    (no hooks fire, nothing is stored, no history loaded); None when there is no such
    session."""
    info = await setup.sessions.get(session_key)
    if info is None:
        return None
    chosen = _personality(setup, info, personality, session_key)
    ctx = setup.tool_context(session_key, chosen, turn_id=setup.new_id())
    turn, notices = await _resolve(setup, info, chosen, ctx)
    return turn, TurnState(seq=setup.sequences.last(session_key), waiting=notices)


async def compact_now(
    setup: SetupDeps, session_key: str, personality: str | None
) -> list[AgentEvent]:
    """Compact the session's history now (prune and summarise); the events it made."""
    prepared = await prepare_context(setup, session_key, personality)
    if prepared is None:
        return []
    turn, state = prepared
    state, _ = await compact(setup.services.context, turn, state, turn.system, "manual")
    events, state = flush(state)
    setup.sequences.continue_after(session_key, state.seq)
    return events


async def measure(
    setup: SetupDeps, session_key: str, personality: str | None
) -> ContextUsage | None:
    """Estimated size of the session's next request against the context window."""
    prepared = await prepare_context(setup, session_key, personality)
    if prepared is None:
        return None
    turn, state = prepared
    deps = setup.services.context
    if state.waiting:
        # Notices belong to the next real turn: forget the files read for this
        # estimate, so that turn reads them again and reports what it finds.
        deps.builder.invalidate(session_key)
    history = await load_history(deps, session_key)
    tokens, _ = estimate(deps, turn, state.estimate, turn.system, history)
    return ContextUsage(tokens, window(deps.options, turn.model))
