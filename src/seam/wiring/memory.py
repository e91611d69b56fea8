"""The markdown memory the settings describe: `$SEAM_HOME/memory/`, the owner's, shared
by every personality (USER.md is about the person, whoever the agent is being). Each
other tenant's sessions get the tenant's own, in `$SEAM_HOME/tenants/<T>/memory/`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seam.contracts.memory import MemoryEntryError, MemoryProvider, MemoryUsage
from seam.contracts.personality import PersonalityRegistry
from seam.core.memory import NoopMemory, TenantMemories
from seam.plugins.memory.markdown import (
    FILES,
    MEMORY_LIMIT,
    TARGETS,
    USER_LIMIT,
    MarkdownMemory,
    Target,
)
from seam.plugins.memory.tenants import OwnerMemory
from seam.plugins.safety import injection, redact
from seam.wiring.default_tools import DefaultGets
from seam.wiring.settings import Settings
from seam.wiring.tenant_dirs import OWNER_TENANT, TENANTS_DIR, tenant_dir

if TYPE_CHECKING:
    from seam.contracts.memory_search import MemorySearch

__all__ = [
    "FILES",
    "TARGETS",
    "MarkdownMemory",
    "MemoryEntryError",
    "MemoryUsage",
    "Target",
    "build_memory",
    "default_gets_memory_search",
    "memory_searches",
    "tenant_memory",
]


def build_memory(settings: Settings) -> MarkdownMemory:
    """Memory refuses entries that read like injections or hold secrets, whoever writes
    them: the safety scanners are handed in here. A session of another tenant than the
    owner uses that tenant's own memory, with the same checks and limits."""
    owner = OwnerMemory(settings.home / "memory", scanner=injection, redactor=redact)
    tenants = settings.home / TENANTS_DIR

    def build(tenant: str) -> MemoryProvider:
        folder = tenant_dir(tenants, tenant)
        # A tenant name that cannot hold files remembers nothing (never the owner's).
        return NoopMemory() if folder is None else tenant_memory(folder / "memory", owner)

    owner.others = TenantMemories(OWNER_TENANT, build)
    return owner


def tenant_memory(folder: Path, like: Any) -> MarkdownMemory:
    """A tenant's own memory in `folder`, with the owner's memory's limits (when it has
    any) and always the injection and secret checks the memory tool applies."""
    limits = getattr(like, "limits", None) or {}
    return MarkdownMemory(
        folder,
        memory_limit=limits.get("memory", MEMORY_LIMIT),
        user_limit=limits.get("user", USER_LIMIT),
        scanner=injection,
        redactor=redact,
    )


def memory_searches(recall: bool = True) -> Callable[[MemoryProvider], MemorySearch | None]:
    """What `memory_search` searches in a session's memory (its tenant's own), by words
    and, when `recall`, by meaning. The search modules load on the first search."""

    def searches(memory: MemoryProvider) -> MemorySearch | None:
        from seam.wiring.memory_search import search_for

        return search_for(memory, recall)

    return searches


def default_gets_memory_search(inner: PersonalityRegistry) -> PersonalityRegistry:
    """The default personality gets `memory_search` in a home whose personality file
    was written before the tool existed (it lists its tools by name)."""
    return DefaultGets(inner, ("memory_search",))
