"""Finding past conversations by meaning as well as by words: what a session store keeps
for it (one vector per searchable message) and what a search hands back.

A store that `KeepsVectors` hands out a `MessageVectors`: beside each user and assistant
message, the vector one embedder computed for it. The vectors go when their message goes
(delete, prune, undo) and follow it through a rename (they hang off the message, not its
session's key). A vector of another embedder is not compared: `unindexed` lists its
message again, and `put_vectors` replaces it.

`SessionRecall` is what surfaces and the `session_search` tool ask: full text and
nearest vectors, each ranked, fused by reciprocal rank (`contracts/recall.fuse_ranks`),
every hit saying which signal found it. Without an embedder it is full text alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from seam.contracts.sessions import ANY_SESSION, SearchHit, SearchScope

WORDS = "words"
MEANING = "meaning"

# A found message as a store reads it back: id, session key, index, role, content.
FoundRow = tuple[int, str, int, str, str]


@runtime_checkable
class MessageVectors(Protocol):
    """Per-message vectors stored beside the transcript (a session store's capability)."""

    async def unindexed(self, model: str, after: int, limit: int) -> list[tuple[int, str]]:
        """Up to `limit` searchable messages (id, content) with an id above `after` and
        no vector of `model`, in id order (a new message's id is above every id there
        is, so an indexer can carry on from the last id it saw)."""
        ...

    async def put_vectors(self, model: str, vectors: Sequence[tuple[int, bytes]]) -> None:
        """Store (message id, vector) pairs of `model`, replacing any other vector of
        those messages; a message removed meanwhile is skipped."""
        ...

    async def vector_mark(self) -> tuple[int, int]:
        """Changes whenever the stored vectors change (their count and the newest's
        sequence number): a cache of them is fresh while it is the same."""
        ...

    async def vectors(self, model: str, tenant: str | None) -> list[tuple[int, bytes]]:
        """Every (message id, vector) of `model`, of `tenant`'s sessions when given."""
        ...

    async def message_ids(self, key: str) -> list[int]:
        """The ids of one session's messages (a search leaves the asking one out)."""
        ...

    async def found_messages(self, ids: Sequence[int], scope: SearchScope) -> list[FoundRow]:
        """The messages of `ids` that still exist and that `scope` covers, any order."""
        ...


@runtime_checkable
class KeepsVectors(Protocol):
    """A session store that can keep message vectors (SQLite and PostgreSQL do)."""

    def message_vectors(self) -> MessageVectors:
        """The store's vectors (its code is imported on the first call, so a process
        that never searches by meaning never loads it)."""
        ...


@dataclass(frozen=True, slots=True)
class RecallHit:
    """A found message and the signals that found it (`WORDS`, `MEANING` or both)."""

    hit: SearchHit
    signals: tuple[str, ...]


@runtime_checkable
class SessionRecall(Protocol):
    """Search over past sessions, best first, by words and (with an embedder) meaning."""

    async def by_meaning(self) -> bool:
        """Whether searches use meaning too (an embedder could be loaded)."""
        ...

    async def search(
        self, query: str, limit: int, scope: SearchScope = ANY_SESSION
    ) -> list[RecallHit]:
        """Up to `limit` hits in the sessions `scope` covers, best first."""
        ...

    async def index_pending(self) -> int:
        """Embed every message not yet indexed; how many were. 0 without an embedder."""
        ...

    async def index_forever(self, every: float) -> None:
        """`index_pending` now and then every `every` seconds until cancelled: the
        background indexer of long-running processes."""
        ...


__all__ = [
    "MEANING",
    "WORDS",
    "FoundRow",
    "KeepsVectors",
    "MessageVectors",
    "RecallHit",
    "SessionRecall",
]
