"""The default personality's toolset widened with tools that come from elsewhere.

The default personality written on first run lists its built-in tools by name, so tools
that appear later (MCP servers' `mcp__*` tools, the skills tools) would never reach it.
`DefaultGets` adds them to that one personality; others get them only by naming them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from seam.contracts.personality import Personality, PersonalityRegistry


class DefaultGets:
    """A personality registry whose default personality's toolset also has `names`
    (each added only when missing; a personality with no toolset already has every tool)."""

    def __init__(self, inner: PersonalityRegistry, names: Sequence[str]) -> None:
        self._inner = inner
        self.names = tuple(names)

    @property
    def default_id(self) -> str:
        return self._inner.default_id

    def get(self, personality_id: str) -> Personality:
        return self._widen(self._inner.get(personality_id))

    def list(self) -> list[Personality]:
        return [self._widen(p) for p in self._inner.list()]

    def _widen(self, personality: Personality) -> Personality:
        toolset = personality.toolset
        if personality.id != self._inner.default_id or toolset is None:
            return personality
        missing = tuple(name for name in self.names if name not in toolset)
        return replace(personality, toolset=(*toolset, *missing)) if missing else personality

    def __getattr__(self, name: str) -> Any:  # anything else the wrapped registry offers
        return getattr(self._inner, name)
