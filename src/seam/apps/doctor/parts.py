"""The doctor's checks of the runtime's parts: the session store, the sandbox, the
personalities, the tools, and whether the default personality's fixed prompt leaves the
conversation room in the context window."""

from __future__ import annotations

from seam.apps.doctor.check import Check
from seam.wiring.settings import Settings

BWRAP_HINT = (
    "install bubblewrap (scripts/start does it when run as root; or apt-get install"
    " bubblewrap), or set [sandbox] backend = 'local' to accept running unisolated"
)


async def store_check(settings: Settings) -> Check:
    """The store's line, as its backend checks it (`wiring/store_backends.py`)."""
    from seam.wiring.store_backends import backend_for, store_location

    where = store_location(settings)
    result = await backend_for(where.url).check(where)
    return Check("session store", result.ok, result.detail, result.hint)


def sandbox_check(settings: Settings) -> Check:
    """Which sandbox backend commands run under, exactly as the runtime will pick it."""
    from seam.apps.cli.sandbox_line import describe_backend
    from seam.wiring import sandbox

    backend = sandbox.sandbox_backend(sandbox.build_sandboxes(settings))
    detail = describe_backend(backend, settings.config.sandbox, None)
    if backend == "unavailable":
        return Check("sandbox", False, detail, BWRAP_HINT)
    return Check("sandbox", True, detail)


def personality_checks(settings: Settings) -> list[Check]:
    from seam.wiring.probes import personality_files

    root = settings.personalities_dir
    default_id = settings.config.agent.personality
    if not root.is_dir() and default_id == "default":
        return [Check("personalities", True, f"{root} (the default one is written on first run)")]
    registry = personality_files(settings)
    found = ", ".join(p.id for p in registry.list()) or "none"
    try:
        registry.get(default_id)
    except KeyError as exc:
        hint = f"create {root / default_id / 'SOUL.md'} or change [agent] personality"
        checks = [Check("personalities", False, str(exc.args[0]), hint)]
    else:
        checks = [Check("personalities", True, f"{root}: {found}; the default is {default_id}")]
    for pid, problem in registry.errors().items():
        checks.append(Check(f"personality {pid}", False, problem, "fix the file it names"))
    return checks


def tools_check() -> Check:
    from seam.wiring.tools import build_tool_registry

    names = build_tool_registry().names()
    return Check("tools", bool(names), f"{len(names)}: {', '.join(sorted(names))}")


async def context_room(settings: Settings) -> Check | None:
    """Whether the default personality's fixed prompt (system prompt without memory or
    project files, plus its tool schemas) leaves the conversation room in the window, by
    the rule the chat's notice uses. None when the personality cannot be read (the
    personalities check says why)."""
    from seam.wiring.probes import fixed_prompt_tokens, model_window, room_problem

    fixed = await fixed_prompt_tokens(settings)
    if fixed is None:
        return None
    default_id = settings.config.agent.personality
    size = model_window(settings)
    problem = room_problem(fixed, fixed, size)
    if problem is not None:
        return Check("context window", False, f"personality {default_id}: {problem}")
    share = fixed * 100 // size
    return Check(
        "context window",
        True,
        f"{size:,} tokens; the fixed prompt of {default_id} takes ~{fixed:,} ({share}%)",
    )
