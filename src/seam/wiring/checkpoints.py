"""Checkpoints from settings: the `[checkpoints]` section, the engine under
`$SEAM_HOME/checkpoints`, the turn hook and the undo service a runtime offers
(`Runtime.checkpoints`). See docs/undo.md."""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from seam.contracts.checkpoints import DEFAULT_IGNORE, CheckpointLog, CheckpointSettings, Diff
from seam.plugins.checkpoints.turns import TurnCheckpoints
from seam.plugins.checkpoints.undo import UndoService
from seam.wiring.settings import ConfigError, Settings, section_or_defaults

if TYPE_CHECKING:
    from seam.services.checkpoints import ShadowCheckpoints
    from seam.wiring.runtime import Runtime


class CheckpointsSection(BaseModel):
    """A snapshot of the working directory before each turn's first change, so `seam
    undo` can take the turn back (docs/undo.md)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)  # see section_or_defaults

    # Take checkpoints at all (off: turns cost nothing more, and there is nothing to undo).
    enabled: bool = True
    # Files larger than this many megabytes are not kept (undo leaves them as they are).
    max_file_mb: float = Field(10.0, gt=0)
    # Names (gitignore patterns) never kept: dependency and build directories.
    ignore: list[str] = Field(default_factory=lambda: list(DEFAULT_IGNORE))
    # Megabytes the checkpoints of every project may use; over it, the oldest sessions'
    # checkpoints are dropped first (`seam sessions prune`, `seam doctor` shows the use).
    budget_mb: float = Field(2048.0, gt=0)
    # More files than this to keep at once (a home directory) is not a project: the turn
    # goes on without a checkpoint (and says so).
    max_files: int = Field(200_000, gt=0)


def checkpoints_section(settings: Settings) -> CheckpointsSection:
    try:
        return section_or_defaults(CheckpointsSection, settings.config.checkpoints)
    except ValidationError as exc:
        problems = "; ".join(
            f"checkpoints.{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
            for err in exc.errors()
        )
        raise ConfigError(f"{settings.config_path}: {problems}") from None


def checkpoint_settings(settings: Settings) -> CheckpointSettings:
    section = checkpoints_section(settings)
    return CheckpointSettings(
        enabled=section.enabled,
        max_file_mb=section.max_file_mb,
        ignore=tuple(section.ignore),
        budget_mb=section.budget_mb,
        max_files=section.max_files,
    )


def build_engine(settings: Settings) -> ShadowCheckpoints:
    """The engine over `$SEAM_HOME/checkpoints`; git starts from this process's
    environment (its `GIT_*` variables dropped by the engine)."""
    from seam.services.checkpoints import ShadowCheckpoints

    return ShadowCheckpoints(
        settings.home / "checkpoints", checkpoint_settings(settings), base_env=os.environ
    )


def attach_checkpoints(runtime: Runtime, settings: Settings) -> None:
    """Register the turn hook and offer `runtime.checkpoints`, when `[checkpoints]` is
    enabled and the store keeps a checkpoint log (every built-in store does)."""
    from seam.wiring.guard import deferred_guardrail

    store = runtime.store
    if not checkpoint_settings(settings).enabled or not isinstance(store, CheckpointLog):
        return
    engine = DeferredEngine(settings)
    hook = TurnCheckpoints(
        engine, store, store, runtime.loop.working_dir_for, deferred_guardrail(settings)
    )
    hook.register(runtime.hooks)
    runtime.checkpoints = UndoService(engine, store, store)


class DeferredEngine:
    """`build_engine(settings)`, built by the first call: a turn takes its first snapshot
    only before a change, so a run that changes nothing (most one-shots) never imports
    the engine and its git plumbing (services/checkpoints)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    @cached_property
    def _engine(self) -> ShadowCheckpoints:
        return build_engine(self._settings)

    async def snapshot(self, work_dir: str, *, session_key: str, label: str = "") -> str:
        return await self._engine.snapshot(work_dir, session_key=session_key, label=label)

    async def diff(self, work_dir: str, a: str, b: str | None = None) -> Diff:
        return await self._engine.diff(work_dir, a, b)

    async def restore(self, work_dir: str, checkpoint: str, paths: Sequence[str]) -> None:
        await self._engine.restore(work_dir, checkpoint, paths)

    async def disk_usage(self) -> int:
        return await self._engine.disk_usage()

    async def sessions(self) -> list[str]:
        return await self._engine.sessions()

    async def link_session(self, old: str, new: str) -> None:
        await self._engine.link_session(old, new)

    async def prune(self, session_keys: Sequence[str]) -> int:
        return await self._engine.prune(session_keys)

    async def prune_to_budget(self, keep: Sequence[str] = ()) -> int:
        return await self._engine.prune_to_budget(keep)
