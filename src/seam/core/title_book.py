"""The in-memory store's titles: who holds each, and each lineage's numbers.

`next_title` and `set_next_title` run on the event loop's thread here, once per new
session's title: a scan over every title (a thousand sessions first titled "hi" make a
lineage of a thousand) held the loop for a millisecond each. Indexed by lineage, the next
number is a `max` over one lineage's numbers, in C.
"""

from __future__ import annotations

from seam.contracts.sessions import lineage_places, lineage_title


class TitleBook:
    """Title -> session key, plus per lineage base the numbers its titles hold (the rule
    of `contracts.sessions.next_lineage_title`, kept as titles come and go)."""

    def __init__(self) -> None:
        self._owners: dict[str, str] = {}
        # base -> {title: its number in that lineage} ("X" and "X #1" both count as 1).
        self._lineages: dict[str, dict[str, int]] = {}

    def owner(self, title: str) -> str | None:
        return self._owners.get(title)

    def put(self, title: str, key: str) -> None:
        self._owners[title] = key
        for base, number in lineage_places(title):
            self._lineages.setdefault(base, {})[title] = number

    def drop(self, title: str) -> None:
        del self._owners[title]
        for base, _ in lineage_places(title):
            numbers = self._lineages[base]
            del numbers[title]
            if not numbers:
                del self._lineages[base]

    def next_title(self, base: str) -> str:
        numbers = self._lineages.get(base)
        return lineage_title(base, max(numbers.values()) if numbers else 0)
