"""A personality registry over a fixed set (the empty stack's default), and a tenant's
overrides of a personality laid over the owner's for that tenant's turns."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from seam.contracts.personality import Personality
from seam.core.tenant_cache import session_tenant

# What a tenant's override may change: how the personality presents itself and which of
# the owner's configured providers answers. Tools, reach, approvals, the network, MCP
# and skills stay the owner's.
TENANT_FIELDS = ("soul", "name", "description", "model", "fallback")
# A session's personality as its tenant sees it (session key, the owner's personality).
PersonalityOverlay = Callable[[str, Personality], Personality]
# A tenant's override of a personality: (tenant, personality id) -> the fields it sets,
# or None when it has none.
TenantOverrides = Callable[[str, str], Mapping[str, Any] | None]

DEFAULT_SOUL = (
    "You are Seam, a helpful personal assistant. Answer concisely. "
    "Use the tools you are given when they help; say so when you cannot do something."
)


class StaticPersonalityRegistry:
    def __init__(
        self, personalities: Iterable[Personality] = (), default_id: str | None = None
    ) -> None:
        self._items = {p.id: p for p in personalities}
        if not self._items:
            self._items["default"] = Personality(id="default", soul=DEFAULT_SOUL, name="Seam")
        self._default = default_id or next(iter(self._items))
        if self._default not in self._items:
            raise KeyError(f"default personality {self._default!r} is not in the registry")

    @property
    def default_id(self) -> str:
        return self._default

    def get(self, personality_id: str) -> Personality:
        try:
            return self._items[personality_id]
        except KeyError:
            known = ", ".join(sorted(self._items))
            raise KeyError(f"unknown personality {personality_id!r} (known: {known})") from None

    def list(self) -> list[Personality]:
        return [self._items[k] for k in sorted(self._items)]


class TenantPersonalities:
    """The owner's personality with a tenant's override laid over it, for that tenant's
    sessions (the owner's sessions get the owner's, unchanged). Only `TENANT_FIELDS` are
    taken from an override, whatever else it holds, so no override can loosen safety.
    Nothing here reads a file: `overrides` comes from wiring."""

    def __init__(self, owner: str, overrides: TenantOverrides) -> None:
        self.owner = owner
        self._overrides = overrides

    def __call__(self, session_key: str, personality: Personality) -> Personality:
        tenant = session_tenant(session_key, self.owner)
        if tenant is None:
            return personality
        found = self._overrides(tenant, personality.id)
        if not found:
            return personality
        changes = {name: found[name] for name in TENANT_FIELDS if name in found}
        return replace(personality, **changes)
