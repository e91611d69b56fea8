"""Memory consolidation as the settings describe it: which files (the owner's
`memory/` and each tenant's `tenants/<T>/memory/`), which model (`[side_models]
reflection`, else `default`, else the main model), the embedder when the `recall` extra
is installed, and the records in `$SEAM_HOME/memory/consolidations/`. Also the cron job
`seam memory consolidate --enable` adds (kind `consolidate`, id `memory-consolidate`).

What consolidation does is plugins/memory/consolidate*.py; here its parts are built.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from seam.contracts.cron import CronJob, CronStore
from seam.contracts.model import ModelProvider
from seam.contracts.recall import Embedder
from seam.plugins.cron.admin import CronAdmin, ScheduleSpec
from seam.plugins.cron.schedule import interval_seconds
from seam.plugins.memory.consolidate import (
    MODEL_FAILED,
    ConsolidationBusy,
    Consolidator,
    MemoryFile,
)
from seam.plugins.memory.consolidate_kind import (
    CONSOLIDATE_JOB,
    CONSOLIDATE_KIND,
    JOB_PROMPT,
    ConsolidateKind,
)
from seam.plugins.memory.consolidate_record import RecordBook, RunRecord, detail_lines, diffs
from seam.plugins.memory.consolidate_revert import RevertRefused, find, revert
from seam.wiring.context import side_model
from seam.wiring.memory import FILES, TARGETS, build_memory, tenant_memory
from seam.wiring.models import LazyModel
from seam.wiring.settings import Settings
from seam.wiring.tenant_dirs import TENANTS_DIR, tenant_dir

RECORDS_DIR = "consolidations"  # under $SEAM_HOME/memory/

__all__ = [
    "CONSOLIDATE_JOB",
    "MODEL_FAILED",
    "ConsolidationBusy",
    "RevertRefused",
    "RunRecord",
    "build_consolidator",
    "close_consolidator",
    "consolidate_kind",
    "detail_lines",
    "diffs",
    "disable_job",
    "enable_job",
    "find",
    "memory_files",
    "revert",
]


def memory_files(settings: Settings) -> list[MemoryFile]:
    """The owner's two files, then each tenant's that has a memory folder."""
    owner = build_memory(settings)
    files = [MemoryFile(f"memory/{FILES[t]}", owner, t) for t in TARGETS]
    tenants = settings.home / TENANTS_DIR
    for folder in sorted(tenants.iterdir()) if tenants.is_dir() else []:
        if tenant_dir(tenants, folder.name) is None or not (folder / "memory").is_dir():
            continue
        memory = tenant_memory(folder / "memory", owner)
        name = f"{TENANTS_DIR}/{folder.name}/memory"
        files += [MemoryFile(f"{name}/{FILES[t]}", memory, t) for t in TARGETS]
    return files


def _embedder() -> Embedder | None:
    from seam.services.recall.embedder import load_embedder

    return load_embedder()


def build_consolidator(
    settings: Settings,
    *,
    model: ModelProvider | None = None,
    clock: Callable[[], float] = time.time,
) -> Consolidator:
    """The consolidator of `settings` (`model`: instead of the configured side model)."""
    return Consolidator(
        files=lambda: memory_files(settings),
        model=model if model is not None else side_model(settings, "reflection"),
        embedder=_embedder,
        book=RecordBook(settings.home / "memory" / RECORDS_DIR),
        clock=clock,
    )


def consolidate_kind(
    settings: Settings,
    *,
    model: ModelProvider | None = None,
    clock: Callable[[], float] = time.time,
) -> ConsolidateKind:
    """The `consolidate` job kind's hooks for a scheduler (its consolidator built on the
    first run, so a scheduler that never runs one builds no model)."""
    built: list[Consolidator] = []

    def consolidator() -> Consolidator:
        if not built:
            built.append(build_consolidator(settings, model=model, clock=clock))
        return built[0]

    return ConsolidateKind(consolidator)


async def enable_job(
    store: CronStore, spec: ScheduleSpec, *, clock: Callable[[], float] = time.time
) -> CronJob:
    """Add (or reschedule) the consolidation job in the cron store; raises CronInputError.
    An interval's first run is one interval on, as the heartbeat's (run one now with
    `seam memory consolidate`)."""
    job = await CronAdmin(store, clock=clock).prepare(
        JOB_PROMPT, spec, deliver="none", kind=CONSOLIDATE_KIND, job_id=CONSOLIDATE_JOB
    )
    every = interval_seconds(job.schedule) if job.schedule_kind == "interval" else None
    if every is not None:
        job = dataclasses.replace(job, next_due_at=job.created_at + every)
    return await store.upsert(job)


async def disable_job(store: CronStore) -> bool:
    """Remove the consolidation job; False when there was none."""
    found = await store.get_job(CONSOLIDATE_JOB)
    if found is None or found.kind != CONSOLIDATE_KIND:
        return False
    return await store.delete(CONSOLIDATE_JOB)


async def close_consolidator(consolidator: Consolidator) -> None:
    """Close the side model `build_consolidator` built (a handed-in one is the caller's)."""
    if isinstance(consolidator.model, LazyModel):
        await consolidator.model.aclose()
