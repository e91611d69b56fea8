"""A personality registry over a fixed set: the empty stack's default."""

from __future__ import annotations

from collections.abc import Iterable

from seam.contracts.personality import Personality

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
