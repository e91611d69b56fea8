"""The dashboard's Memory section: MEMORY.md and USER.md, viewed and edited, characters used of
the limit.

The whole-file edit is the existing `PUT /api/memory` (app.py, `editing.put_memory`: every
entry goes through the memory's own checks in a scratch copy first). This module adds
what the page needs around it: each file's entries with the characters used of its limit
(the limits the memory tool enforces), and adding or removing one entry through the very
calls the agent's memory tool makes (`add`, `remove`: the injection and secret scans,
duplicates, the size limit), so a refused entry is a 400 saying why. The caller's memory
is the owner's, or a tenant's own (`tenant_files.memory_store`): never another's. The
files are read fresh on every request, so the CLI and the agent see each edit at once,
and the page sees theirs.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from seam.apps.web import tenant_files
from seam.apps.web.auth import Principal
from seam.apps.web.control.deps import Control
from seam.apps.web.problems import Conflict, Invalid
from seam.wiring.memory import FILES, TARGETS, MarkdownMemory, MemoryEntryError

Target = Literal["memory", "user"]
# How entries are joined in their file (a line holding only §); the limit counts it.
JOIN = "\n§\n"
ENTRY_MAX = 20_000


class NewEntry(BaseModel):
    """One entry to add, as the memory tool's `add` takes it."""

    model_config = ConfigDict(extra="forbid")
    entry: str = Field(min_length=1, max_length=ENTRY_MAX)


def store_of(control: Control, who: Principal) -> MarkdownMemory:
    """The caller's memory: the owner's, or the tenant's own (same checks and limits)."""
    runtime = control.backend.runtime
    if who.owner:
        store = runtime.memory
    else:
        store = tenant_files.memory_store(runtime, control.backend.tenants_dir, who.tenant)
    if not isinstance(store, MarkdownMemory):
        raise Conflict("this server has no editable memory")
    return store


def files_answer(store: MarkdownMemory, who: Principal) -> dict[str, Any]:
    """Each memory file's entries and its characters used of the limit."""
    files = []
    for target in TARGETS:
        usage = store.usage(target)
        files.append(
            {
                "target": target,
                "file": FILES[target],
                "entries": store.entries(target),
                "chars": usage.chars,
                "limit": usage.limit,
            }
        )
    return {"files": files, "separator": JOIN, "tenant": None if who.owner else who.tenant}


def add_routes(api: APIRouter, control: Control) -> None:
    @api.get("/memory/files", tags=["control"])
    async def memory_files(request: Request) -> dict[str, Any]:
        """MEMORY.md and USER.md of the caller (a tenant: its own), each with its entries
        and the characters used of its limit (the memory tool's limits)."""
        who: Principal = request.state.principal
        return files_answer(store_of(control, who), who)

    @api.post("/memory/{target}/entries", tags=["control"])
    async def add_memory_entry(request: Request, target: Target, body: NewEntry) -> dict[str, Any]:
        """Add one entry as the agent's memory tool does: refused (400, one line saying
        why) when it reads like an injection, holds a secret, repeats an entry or would
        pass the file's limit."""
        who: Principal = request.state.principal
        memory = store_of(control, who)
        try:
            memory.add(target, body.entry)
        except MemoryEntryError as exc:
            raise Invalid(f"{FILES[target]}: {exc}") from None
        return files_answer(memory, who)

    @api.delete("/memory/{target}/entries/{index}", tags=["control"])
    async def remove_memory_entry(
        request: Request,
        target: Target,
        index: Annotated[int, Path(ge=0, le=100_000)],
        entry: Annotated[str, Query(min_length=1, max_length=ENTRY_MAX)],
    ) -> dict[str, Any]:
        """Remove entry number `index` (from 0) of a memory file, as the memory tool does.
        `entry` is its text as the page read it: when the file changed since, nothing is
        removed (409)."""
        who: Principal = request.state.principal
        memory = store_of(control, who)
        entries = memory.entries(target)
        if index >= len(entries) or entries[index] != entry.strip():
            raise Conflict(f"{FILES[target]} changed since the page read it; reload and retry")
        try:
            memory.remove(target, entries[index])
        except MemoryEntryError as exc:
            raise Invalid(f"{FILES[target]}: {exc}") from None
        return files_answer(memory, who)


__all__ = ["JOIN", "NewEntry", "add_routes", "files_answer", "store_of"]
