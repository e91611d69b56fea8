"""The empty stack's memory (remembers nothing, which is a valid memory), and memory per
tenant: a tenant's sessions read and write the tenant's own memory, never the owner's."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from seam.contracts.memory import MemoryProvider
from seam.contracts.messages import Message
from seam.core.tenant_cache import TenantCache, session_tenant


class NoopMemory:
    async def prefetch(self, session_key: str) -> str | None:
        return None

    async def sync(self, session_key: str, messages: Sequence[Message]) -> None:
        return None


@runtime_checkable
class SessionMemories(Protocol):
    """A memory that keeps one store per tenant and says which one a session uses."""

    def for_session(self, session_key: str) -> MemoryProvider: ...


def memory_for_session(memory: MemoryProvider, session_key: str) -> MemoryProvider:
    """The memory `session_key`'s tools edit: its tenant's when `memory` keeps one per
    tenant (`SessionMemories`), else `memory` itself (every session shares it)."""
    # Duck-typed: a runtime-checkable isinstance costs microseconds on every turn.
    route: Callable[[str], MemoryProvider] | None = getattr(memory, "for_session", None)
    return memory if route is None else route(session_key)


class TenantMemories:
    """Which memory a session's turns use, other than the owner's: called with a session
    key, it answers None for the owner's sessions and the tenant's own memory (built by
    `build` on first use, then kept) for every other tenant's. Nothing here reads a file:
    `build` comes from wiring."""

    def __init__(self, owner: str, build: Callable[[str], MemoryProvider]) -> None:
        self.owner = owner
        self._memories: TenantCache[MemoryProvider] = TenantCache(build)

    def __call__(self, session_key: str) -> MemoryProvider | None:
        tenant = session_tenant(session_key, self.owner)
        return None if tenant is None else self._memories.get(tenant)


__all__ = ["NoopMemory", "SessionMemories", "TenantMemories", "memory_for_session"]
