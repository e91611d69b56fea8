"""What a session's tenant owns, found from its durable key: the owner's sessions (and
anything that is not a session key: listings, probes) are the owner's, every other
tenant's sessions get that tenant's own things, built on first use and kept."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache
from typing import Generic, TypeVar

from seam.core.identity import parse_session_storage_key

T = TypeVar("T")
# Tenants whose things are kept built; one evicted is rebuilt on its next turn.
MAX_TENANTS = 256


def session_tenant(session_key: str, owner: str) -> str | None:
    """The tenant `session_key` names, or None when that is the owner or it names none
    (a subagent's key carries its parent's tenant, so it follows its parent)."""
    tenant = _tenant_of(session_key)
    return None if tenant == owner else tenant


@lru_cache(maxsize=4096)
def _tenant_of(session_key: str) -> str | None:
    """Asked several times a turn (prompt, tools, sync), so each key is parsed once."""
    try:
        return parse_session_storage_key(session_key)[0]
    except ValueError:
        return None


class TenantCache(Generic[T]):
    """`build(tenant)` once per tenant, the most recently used `size` kept."""

    def __init__(self, build: Callable[[str], T], size: int = MAX_TENANTS) -> None:
        self._build = build
        self._size = size
        self._built: OrderedDict[str, T] = OrderedDict()

    def get(self, tenant: str) -> T:
        built = self._built.get(tenant)
        if built is None:
            built = self._build(tenant)
            self._built[tenant] = built
            if len(self._built) > self._size:
                self._built.popitem(last=False)
        else:
            self._built.move_to_end(tenant)
        return built


__all__ = ["MAX_TENANTS", "TenantCache", "session_tenant"]
