"""The configuration half of the composition root: `create_runtime(settings=None,
**overrides)` builds whatever was not handed in from the settings (`$SEAM_HOME/config.toml`
and the environment, loaded only when something is missing): the SQLite or PostgreSQL
store, the file personalities, the real filesystem, the sandbox, the command gate and the
configured model; then it assembles (`wiring/assembly.py`).

It is a short composition of named builders that pass typed values: `Overrides` (the
keywords handed in, over the `SharedParts` every runtime and loop takes), the model and
the `AssemblyParts` the settings fill in, `Extras` (the hooks, MCP servers and skills a
configured runtime adds), then the assembly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Unpack

from seam.contracts.execution import DEFAULT_LEASE_SECONDS, DEFAULT_MAX_ATTEMPTS, ExecutionStore
from seam.contracts.hooks import HookRegistry
from seam.contracts.model import ModelProvider, OnRetry
from seam.contracts.personality import PersonalityRegistry
from seam.contracts.tracing import NOOP_TRACER, Tracer
from seam.core.coordinator import Coordinator
from seam.core.loop import LoopOptions
from seam.core.loop_parts import SharedParts, check_keywords, given_or
from seam.core.workflows import WorkflowRegistry
from seam.plugins.hooks.reflection import ReflectionHook
from seam.plugins.hooks.titles import TitleHook
from seam.plugins.mcp.servers import McpServers
from seam.plugins.skills.catalog import SkillCatalog
from seam.wiring.assembly import AssemblyParts, assemble_runtime, default_hooks, one_store
from seam.wiring.context import (
    build_compressor,
    build_context_builder,
    build_reflection,
    build_titles,
    context_options,
)
from seam.wiring.memory import default_gets_memory_search
from seam.wiring.runtime import Runtime
from seam.wiring.secrets import secret_redactor
from seam.wiring.settings import Settings, load_settings
from seam.wiring.telemetry import build_tracer, noting_retries


class Overrides(SharedParts, total=False):
    """`create_runtime`'s keywords beside `settings`: the collaborators handed in instead
    of the settings' ones (`SharedParts`, and these), and how the runtime is used."""

    model: ModelProvider | None
    gateway: bool
    working_dir: str | None
    tenant_id: str
    store: ExecutionStore | None
    workflows: WorkflowRegistry | None
    coordinator: Coordinator | None
    on_retry: OnRetry | None
    interactive: bool


@dataclass(frozen=True)
class Extras:
    """What a configured runtime adds to its collaborators: the memory review and title
    hooks (registered on the hooks here, so assembly only closes them), MCP servers and
    skills, and the personalities that name them."""

    personalities: PersonalityRegistry | None
    reflection: ReflectionHook | None = None
    titles: TitleHook | None = None
    mcp: McpServers | None = None
    skills: SkillCatalog | None = None


def create_runtime(settings: Settings | None = None, **given: Unpack[Overrides]) -> Runtime:
    """The runtime the settings describe, with the collaborators handed in instead of
    theirs; `settings` are loaded (`load_settings()`) only when something is missing.

    Without settings to read this needs every one of `model`, `personalities`, `store`,
    `storage`, `memory`, `sandboxes`, `gate`, `pricing`, `options` and `working_dir`; a
    test that wants none of them read wants `assemble_runtime`.

    `on_retry` hears of each retry the configured model makes. `interactive` (a person
    waits on each turn: `seam run`, `seam chat`) settles a turn that failed transiently
    as failed: the model's own retries, shown through `on_retry`, are all the retrying
    there is, instead of minutes of silent re-runs with back-off (a crashed turn is
    still resumed). `gateway`: a chat gateway drives it (approval mode "off" refused);
    `tenant_id` is "local" unless given.
    """
    check_keywords(given, Overrides.__optional_keys__, "create_runtime")
    store = one_store(given.get("store"), given.get("sessions"))
    settings = settings_for(given, store, settings)
    tracer = build_tracer(settings)
    model, parts = configured(given, store, settings, tracer)
    hooks = given_or(given.get("hooks"), default_hooks)
    extras = build_extras(given, settings, model, parts, hooks)
    runtime = assemble_configured(given, settings, model, parts, hooks, extras, tracer)
    finish(runtime, given, settings, extras.titles)
    return runtime


def settings_for(
    given: Overrides, store: ExecutionStore | None, settings: Settings | None
) -> Settings | None:
    """The settings handed in, or loaded when a collaborator is missing (never otherwise:
    a runtime of handed-in parts reads no file)."""
    wanted = (
        given.get("model"),
        given.get("personalities"),
        store,
        given.get("storage"),
        given.get("memory"),
        given.get("sandboxes"),
        given.get("gate"),
        given.get("pricing"),
        given.get("options"),
        given.get("working_dir"),
    )
    if settings is None and any(item is None for item in wanted):
        return load_settings()
    return settings


def configured(
    given: Overrides, store: ExecutionStore | None, settings: Settings | None, tracer: Tracer
) -> tuple[ModelProvider, AssemblyParts]:
    """The model and the collaborators handed in, with the settings filling in the rest
    (the store's home is created first: every file collaborator lives under it)."""
    parts: AssemblyParts = {
        "personalities": given.get("personalities"),
        "store": store,
        "storage": given.get("storage"),
        "memory": given.get("memory"),
        "sandboxes": given.get("sandboxes"),
        "gate": given.get("gate"),
        "pricing": given.get("pricing"),
        "options": given.get("options"),
        "budget": given.get("budget"),
    }
    working_dir = given.get("working_dir")
    if working_dir is not None:
        parts["working_dir"] = working_dir or "/"
    model = given.get("model")
    if settings is not None:
        settings.home.mkdir(parents=True, exist_ok=True)
        fill_places(parts, settings)
        model = fill_model(parts, settings, given, tracer)
    assert model is not None  # settings were loaded whenever it was missing
    return model, parts


def fill_places(parts: AssemblyParts, settings: Settings) -> None:
    """The personalities, store, storage, memory, working directory and sandbox the
    settings describe, each only where none was handed in (in this order)."""
    if parts.get("personalities") is None:
        parts["personalities"] = file_personalities(settings)
    if parts.get("store") is None:
        parts["store"] = _open_store(settings)
    if parts.get("storage") is None:
        from seam.services.storage.fs import FsStorage

        parts["storage"] = FsStorage()
    if parts.get("memory") is None:
        from seam.wiring.memory import build_memory

        parts["memory"] = build_memory(settings)
    parts.setdefault("working_dir", str(settings.working_dir))
    if parts.get("sandboxes") is None:
        from seam.wiring.sandbox import LazySandboxes

        parts["sandboxes"] = LazySandboxes(settings)


def fill_model(
    parts: AssemblyParts, settings: Settings, given: Overrides, tracer: Tracer
) -> ModelProvider:
    """The model (and the per-personality resolver), gate, prices and loop options the
    settings describe where none was handed in, and the paths no tool may touch."""
    model = given.get("model")
    if model is None:
        from seam.wiring.models import LazyModel, ModelFactory, PersonalityModels

        factory = ModelFactory(settings, on_retry=noting_retries(tracer, given.get("on_retry")))
        model = LazyModel(factory)
        parts["models"] = PersonalityModels(factory, model)
    if parts.get("gate") is None:
        from seam.wiring.guard import build_gate
        from seam.wiring.judge import lazy_judge

        # Approval mode "off" only where a person drives the agent, never a gateway.
        allow_off = not given.get("gateway", False)
        parts["gate"] = build_gate(settings, judge=lazy_judge(settings), allow_off=allow_off)
    if parts.get("pricing") is None:
        from seam.wiring.pricing import price_table

        parts["pricing"] = price_table(settings.config.prices, where=str(settings.config_path))
    if parts.get("budget") is None and budget_wanted(settings, parts, given):
        from seam.wiring.budget import build_budget

        parts["budget"] = build_budget(settings, parts.get("store"), parts.get("pricing"))
    parts["options"] = parts.get("options") or loop_options(settings)
    # The agent must not edit its own controls (approvals, config, personalities, the
    # store) nor the person's secrets and start-up files: one list, see wiring/reach.py.
    from seam.wiring.reach import fs_deny as reach_deny

    parts["fs_deny"] = reach_deny(settings)
    return model


def budget_wanted(settings: Settings, parts: AssemblyParts, given: Overrides) -> bool:
    """Whether the loop needs a spending gate (wiring/budget.py): always in a long-running
    runtime (it runs cron jobs, whose limits live in the store), else only when `[budget]`
    or a personality sets a limit, so a run without limits imports none of it."""
    if not given.get("interactive") or settings.config.budget.limited():
        return True
    registry = parts.get("personalities")
    try:
        return registry is not None and any(p.budget is not None for p in registry.list())
    except Exception:  # a broken personality is reported where it is used, not here
        return False


def file_personalities(settings: Settings) -> PersonalityRegistry:
    """The personalities in `$SEAM_HOME/personalities`, the default one written first
    if it is missing."""
    from seam.plugins.personalities.files import (
        FilePersonalityRegistry,
        write_default_personality,
    )

    write_default_personality(str(settings.personalities_dir))
    return FilePersonalityRegistry(
        str(settings.personalities_dir), default_id=settings.config.agent.personality
    )


def loop_options(settings: Settings) -> LoopOptions:
    """The loop's limits from `[agent]`, its approval timeout from the guard's section,
    and its context handling (`context_options`)."""
    from seam.wiring.guard import guard_section

    agent = settings.config.agent
    return context_options(
        settings,
        LoopOptions(
            result_budget_chars=agent.result_budget_chars,
            streaming_timeout=agent.streaming_timeout,
            max_iterations=agent.max_iterations,
            approval_timeout=guard_section(settings).approval_timeout,
        ),
    )


def build_extras(
    given: Overrides,
    settings: Settings | None,
    model: ModelProvider,
    parts: AssemblyParts,
    hooks: HookRegistry,
) -> Extras:
    """The memory review and titles (registered on `hooks`), then MCP servers and skills
    when the built-in tools are used, then the heartbeat personality; none without
    settings."""
    personalities = parts.get("personalities")
    if settings is None:
        return Extras(personalities=personalities)
    memory, store = parts.get("memory"), parts.get("store")
    # Both built from the settings when missing.
    assert memory is not None and store is not None
    reflection = build_reflection(settings, memory, hooks, model)
    titles = build_titles(settings, store, hooks)
    mcp = skills = None
    if given.get("tools") is None:
        mcp, personalities = with_mcp(settings, personalities)
        skills, personalities = with_skills(settings, personalities)
        if personalities is not None:
            personalities = default_gets_memory_search(personalities)
        if settings.config.web_search.provider and personalities is not None:
            from seam.wiring.web_search import default_gets_web_search

            personalities = default_gets_web_search(personalities)
    if personalities is not None:
        from seam.wiring.heartbeat_personality import with_heartbeat

        # The lean `heartbeat` personality, in every runtime so any worker runs a beat.
        personalities = with_heartbeat(personalities, settings)
    return Extras(
        personalities=personalities,
        reflection=reflection,
        titles=titles,
        mcp=mcp,
        skills=skills,
    )


def with_mcp(
    settings: Settings, personalities: PersonalityRegistry | None
) -> tuple[McpServers, PersonalityRegistry | None]:
    """The configured MCP servers, and the personalities with the default one offered
    their tools (only when there are servers)."""
    from seam.wiring.mcp import build_mcp, default_gets_mcp

    mcp = build_mcp(settings)
    if mcp.names() and personalities is not None:
        personalities = default_gets_mcp(personalities)
    return mcp, personalities


def with_skills(
    settings: Settings, personalities: PersonalityRegistry | None
) -> tuple[SkillCatalog, PersonalityRegistry | None]:
    """The Agent Skills catalog, and the personalities with the default one naming its
    tools: each session gets them only where a skill is offered (the tools' factories
    ask), so sessions elsewhere stay lean."""
    from seam.wiring.skills import build_skills, default_gets_skills

    skills = build_skills(settings)
    if personalities is not None:
        personalities = default_gets_skills(personalities)
    return skills, personalities


def assemble_configured(
    given: Overrides,
    settings: Settings | None,
    model: ModelProvider,
    parts: AssemblyParts,
    hooks: HookRegistry,
    extras: Extras,
    tracer: Tracer,
) -> Runtime:
    """`assemble_runtime` of the configured collaborators, with the store's lease and
    attempts, this process as the owner, and the settings' redaction, context and
    telemetry."""
    from seam.wiring.owners import dead_owners, owner_id

    section = settings.config.store if settings is not None else None
    wired: AssemblyParts = {
        **parts,
        "tools": given.get("tools"),
        "hooks": hooks,
        "personalities": extras.personalities,
        "redact": secret_redactor(settings),
        "context": build_context_builder(settings),
        "compressor": build_compressor(settings),
        "reflection": extras.reflection,
        "tenant_id": given.get("tenant_id", "local"),
        "workflows": given.get("workflows"),
        "coordinator": given.get("coordinator"),
        "owner": owner_id(),
        "dead_owners": dead_owners,
        "lease": section.lease_seconds if section is not None else DEFAULT_LEASE_SECONDS,
        "max_attempts": section.max_attempts if section is not None else DEFAULT_MAX_ATTEMPTS,
        "settings": settings,
        "mcp": extras.mcp,
        "skills": extras.skills,
        "tracer": None if tracer is NOOP_TRACER else tracer,
        "slow_store_ms": settings.config.telemetry.slow_store_ms if settings else 50.0,
    }
    return assemble_runtime(model=model, **wired)


def finish(
    runtime: Runtime, given: Overrides, settings: Settings | None, titles: TitleHook | None
) -> None:
    """What the runtime learns after assembly: its title hook, when idle sessions end,
    each tenant's personality overrides, and (with its own Coordinator) whether a
    transient failure is re-run or, where a person waits on the turn, settled failed."""
    runtime.titles = titles
    if settings is not None:
        from seam.wiring.tenant_dirs import personality_overlay

        runtime.idle_end = settings.config.sessions.idle_end_seconds
        runtime.loop.personality_overlay = personality_overlay(settings)
        from seam.wiring.checkpoints import attach_checkpoints

        attach_checkpoints(runtime, settings)
    if given.get("coordinator") is None:
        runtime.coordinator.rerun_transient = not given.get("interactive", False)


def _open_store(settings: Settings) -> ExecutionStore:
    """The store the settings name, from the registered backend its URL selects (opened
    by `Runtime.open()`)."""
    from seam.wiring.store_backends import open_store, store_location

    return open_store(store_location(settings))
