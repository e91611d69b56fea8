"""The context window as the settings describe it: prompt builder, compressor, reflection.

Core holds the logic (`core/context.py`, `core/compression.py`); this module knows the
concrete pieces it is handed: the injection scanner for project files, the guidance line
of each built-in tool, the `[context]` and `[reflection]` sections and the side models
(`[side_models] compression` and `reflection`, built on first use).
"""

from __future__ import annotations

from dataclasses import replace

from seam.contracts.hooks import HookRegistry
from seam.contracts.memory import EditableMemory, MemoryProvider
from seam.contracts.model import ModelProvider
from seam.contracts.sessions import SessionStore
from seam.core.compression import HistoryCompressor
from seam.core.context import DefaultContextBuilder
from seam.core.identity import TASK_PREFIX, parse_session_storage_key
from seam.core.loop import LoopOptions
from seam.plugins.hooks.reflection import ReflectionHook
from seam.plugins.hooks.titles import TitleHook
from seam.plugins.safety.injection import scan
from seam.wiring.models import LazyModel, ModelFactory
from seam.wiring.settings import Settings

# One line per tool, sent only for the tools a personality has. Policy across tools (which
# to prefer, when to use one at all) lives here; what a tool does lives in its description.
TOOL_GUIDANCE: dict[str, str] = {
    "read_file": "Read, search and edit files with the file tools, not shell commands.",
    "terminal": "Run commands in the working directory; long-running ones go to `process`.",
    "execute_code": "Use `execute_code` for calculations and quick scripts.",
    "todo": "Keep a `todo` list for work of more than three steps.",
    "clarify": "Ask with `clarify` only when a wrong guess would be costly.",
    "memory": "Save lasting facts about the person or project with `memory`, never secrets.",
    "session_search": "Use `session_search` when the person refers to an earlier conversation.",
    "memory_search": "Find saved notes with `memory_search` before asking the person again.",
    "delegate_task": "Delegate self-contained subtasks with `delegate_task`.",
}


def injection_kinds(text: str) -> list[str]:
    """The scanner core's prompt builder is handed: kinds of what `text` was flagged for."""
    return [finding.kind for finding in scan(text)]


def build_context_builder(settings: Settings | None) -> DefaultContextBuilder:
    section = settings.config.context if settings is not None else None
    if section is None or settings is None:
        return DefaultContextBuilder(guidance=TOOL_GUIDANCE, scanner=injection_kinds)
    from seam.wiring.skills import build_skills, skills_index

    return DefaultContextBuilder(
        guidance=TOOL_GUIDANCE,
        files=section.files,
        max_file_chars=section.max_file_chars,
        scanner=injection_kinds,
        skills=skills_index(build_skills(settings)),
    )


def context_options(settings: Settings, options: LoopOptions) -> LoopOptions:
    """`options` with the `[context]` section's window and thresholds."""
    section = settings.config.context
    return replace(
        options,
        context_window=section.window or None,
        compress_at=section.compress_at or None,
        context_warn_at=section.warn_at or None,
        protect_first=section.protect_first,
        protect_last=section.protect_last,
    )


def build_compressor(settings: Settings | None) -> HistoryCompressor:
    """Summaries come from `[side_models] compression` when set, else the turn's model."""
    if settings is None:
        return HistoryCompressor()
    side = settings.config.side_models
    if not (side.compression or side.default):
        return HistoryCompressor()
    return HistoryCompressor(model=side_model(settings, "compression"))


def build_reflection(
    settings: Settings, memory: MemoryProvider, hooks: HookRegistry, main: ModelProvider
) -> ReflectionHook | None:
    """The reflection hook, registered on `hooks`, when `[reflection] enabled` is set and
    the memory can take entries (`EditableMemory`, as the markdown memory is)."""
    section = settings.config.reflection
    if not section.enabled or not isinstance(memory, EditableMemory):
        return None
    side = settings.config.side_models
    model: ModelProvider = (
        side_model(settings, "reflection") if side.reflection or side.default else main
    )
    hook = ReflectionHook(model, memory, max_entries=section.max_entries)
    hook.register(hooks)
    return hook


def is_subagent_key(key: str) -> bool:
    """Whether `key` names a subagent's session (a `task:` name)."""
    try:
        return parse_session_storage_key(key)[2].startswith(TASK_PREFIX)
    except ValueError:
        return False


def build_titles(settings: Settings, sessions: SessionStore, hooks: HookRegistry) -> TitleHook:
    """The title hook, registered on `hooks`: a `[side_models] titles` (or `default`)
    model when one is set, else the first-message heuristic (never the local model)."""
    side = settings.config.side_models
    model = side_model(settings, "titles") if side.titles or side.default else None
    hook = TitleHook(sessions, model=model, skip=is_subagent_key)
    hook.register(hooks)
    return hook


async def close_side_models(
    compressor: object, reflection: ReflectionHook | None, titles: TitleHook | None = None
) -> None:
    """Close the side models built here (the main model is closed by the runtime)."""
    for model in (
        getattr(compressor, "model", None),
        reflection.model if reflection else None,
        titles.model if titles else None,
    ):
        if isinstance(model, LazyModel):
            await model.aclose()


def side_model(settings: Settings, task: str) -> LazyModel:
    """A side-task model (`ModelFactory.side`) built on first use: most sessions never
    compress, and a model that cannot be built must not stop the runtime starting."""
    return LazyModel(ModelFactory(settings), lambda factory: factory.side(task))
