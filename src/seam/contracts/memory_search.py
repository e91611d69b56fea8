"""Searching the agent's memory entries: what one match says and what a search answers.

The `memory_search` tool, `seam memory search` and any later surface meet the search
through this contract, so they print the same thing: each match with where it came from
(the file and the entry's number in it) and which signal found it, "words" (full text,
the word rules of `contracts.search`) or "meaning" (local embeddings, `contracts.recall`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

Signal = Literal["words", "meaning"]
# Said once per search when no embedder is at hand (the recall extra missing, or
# `[recall] enabled = false`): the results are full-text matches alone.
FULL_TEXT_ONLY = "full text only: install the recall extra for search by meaning"


@dataclass(frozen=True, slots=True)
class MemoryMatch:
    """One entry that matched: `file` (MEMORY.md or USER.md), `entry` (its 1-based
    number in that file, as `seam memory show` lists them), the entry's `text`, and the
    `signals` that ranked it."""

    file: str
    entry: int
    text: str
    signals: tuple[Signal, ...]

    @property
    def where(self) -> str:
        return f"{self.file} #{self.entry}"

    @property
    def found_by(self) -> str:
        return " and ".join(self.signals)


@dataclass(frozen=True, slots=True)
class MemorySearchResult:
    """Matches best first; `note` is said once when the search was full text only."""

    matches: tuple[MemoryMatch, ...]
    note: str | None = None


@runtime_checkable
class MemorySearch(Protocol):
    async def search(self, query: str, limit: int) -> MemorySearchResult:
        """The best `limit` entries for `query`. Embedding work (loading the model,
        embedding entries changed since the last search) runs in a worker thread."""
        ...


__all__ = ["FULL_TEXT_ONLY", "MemoryMatch", "MemorySearch", "MemorySearchResult", "Signal"]
