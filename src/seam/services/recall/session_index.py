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
EMBEDDED_CHARS = 4000


class SessionIndexer:
    """Fills in the missing vectors of one store with one embedder."""

    def __init__(self, store: MessageVectors, embedder: Embedder, batch: int = DEFAULT_BATCH):
        self._store = store
        self._embedder = embedder
        self._batch = batch
        self._lock = asyncio.Lock()

    async def index_pending(self) -> int:
        """Embed every message that has no vector of this embedder; how many were."""
        async with self._lock:
            done = 0
            previous: list[int] = []
            while True:
                rows = await self._store.unindexed(self._embedder.name, self._batch)
                ids = [message_id for message_id, _ in rows]
                if not rows or ids == previous:  # nothing left, or nothing could be stored
                    return done
                texts = [content[:EMBEDDED_CHARS] for _, content in rows]
                vectors = await asyncio.to_thread(self._embedder.embed, texts)
                pairs = list(zip(ids, vectors, strict=True))
                await self._store.put_vectors(self._embedder.name, pairs)
                done += len(rows)
                previous = ids
                if len(rows) < self._batch:
                    return done

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
