"""Embedding past messages for search by meaning, incrementally and off the turn's path.

Nothing is embedded while a turn runs: the indexer asks the store for messages with no
vector of this embedder, embeds them in batches in a worker thread (`asyncio.to_thread`:
the embedder is CPU-bound) and stores the vectors. Long-running processes run it in the
background now and then; a search runs it first, so what was said since is found too.
One indexing pass at a time per process (a lock): a search that arrives during a
background pass waits for it rather than embedding the same messages twice.
"""

from __future__ import annotations

import asyncio
import logging

from seam.contracts.recall import Embedder
from seam.contracts.session_recall import MessageVectors

log = logging.getLogger("seam.recall")

DEFAULT_BATCH = 256
# Long messages are embedded by their beginning: an embedding of pooled tokens says
# little more past a few pages, and the cost grows with the length.
EMBEDDED_CHARS = 2000


class SessionIndexer:
    """Fills in the missing vectors of one store with one embedder.

    It carries on from the last message id it indexed (a new message's id is above every
    id there is), so a catch-up with nothing new is one short range query, not a pass
    over the history. It looks from the start again when vectors went away (a message
    was deleted: SQLite may then give the next message the freed id)."""

    def __init__(self, store: MessageVectors, embedder: Embedder, batch: int = DEFAULT_BATCH):
        self._store = store
        self._embedder = embedder
        self._batch = batch
        self._lock = asyncio.Lock()
        self._after = 0
        self._count = 0  # vectors there were when the last pass ended

    async def index_pending(self, mark: tuple[int, int] | None = None) -> int:
        """Embed every message that has no vector of this embedder; how many were.
        `mark`: the store's `vector_mark` if the caller just read it."""
        async with self._lock:
            count, _ = mark if mark is not None else await self._store.vector_mark()
            if count < self._count:
                self._after = 0
            done = 0
            while True:
                rows = await self._store.unindexed(self._embedder.name, self._after, self._batch)
                if rows:
                    await self._embed(rows)
                    done += len(rows)
                    self._after = rows[-1][0]
                if len(rows) < self._batch:
                    # At least this many now (another process may have added more).
                    self._count = count + done
                    return done

    async def _embed(self, rows: list[tuple[int, str]]) -> None:
        """One batch, shortest texts together (the embedder pads each of its chunks to
        the longest text in it)."""
        rows = sorted(rows, key=lambda row: len(row[1]))
        texts = [content[:EMBEDDED_CHARS] for _, content in rows]
        vectors = await asyncio.to_thread(self._embedder.embed, texts)
        pairs = [(row[0], vector) for row, vector in zip(rows, vectors, strict=True)]
        await self._store.put_vectors(self._embedder.name, pairs)

    async def index_forever(self, every: float) -> None:
        """`index_pending` now and every `every` seconds, until cancelled. A failure
        (the store briefly unavailable) is logged and tried again next time."""
        while True:
            try:
                indexed = await self.index_pending()
            except Exception:
                log.warning("could not index messages for search by meaning", exc_info=True)
            else:
                if indexed:
                    log.info("indexed %d messages for search by meaning", indexed)
            await asyncio.sleep(every)


__all__ = ["DEFAULT_BATCH", "EMBEDDED_CHARS", "SessionIndexer"]
