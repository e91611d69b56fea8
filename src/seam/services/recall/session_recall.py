"""Search over past sessions by words and by meaning, fused by reciprocal rank.

The store's full-text search ranks the messages that have every query word (newest
first); the vector matrix ranks messages by the cosine of their vector with the query's
(at or above `min_similarity`, so a query about nothing that was said finds nothing);
`fuse_ranks` merges the two lists. Before searching, what is not yet indexed is embedded
(`SessionIndexer`), so what was said a minute ago is found by meaning too.

Without an embedder (the `recall` extra missing, `[recall] enabled = false`, or a store
that keeps no vectors) it is the store's full-text search exactly as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from seam.contracts.recall import Embedder, fuse_ranks
from seam.contracts.search import snippet, terms
from seam.contracts.session_recall import MEANING, WORDS, MessageVectors, RecallHit
from seam.contracts.sessions import ANY_SESSION, SearchHit, SearchScope, SessionCatalogue
from seam.services.recall.session_index import DEFAULT_BATCH, SessionIndexer
from seam.services.recall.vector_matrix import VectorMatrix

# Each signal offers this many candidates per hit asked for (at least MIN_POOL), so a
# message ranked modestly by both can still beat one ranked first by one.
POOL_FACTOR = 3
MIN_POOL = 30
# WordLlama's cosine between a question and the message that answers it in other words
# is typically 0.2 to 0.5; between unrelated short texts mostly under 0.2.
DEFAULT_MIN_SIMILARITY = 0.2


class SessionRecall:
    """`contracts/session_recall.SessionRecall` over one store.

    `load_embedder` is called once, in a thread, when meaning is first needed (loading
    takes about half a second); None there, or no `vectors` capability, means full text
    alone."""

    def __init__(
        self,
        catalogue: SessionCatalogue,
        vectors: MessageVectors | None = None,
        load_embedder: Callable[[], Embedder | None] | None = None,
        *,
        batch: int = DEFAULT_BATCH,
        min_similarity: float = DEFAULT_MIN_SIMILARITY,
    ) -> None:
        self._catalogue = catalogue
        self._vectors = vectors
        self._load = load_embedder if vectors is not None else None
        self._batch = batch
        self._min_similarity = min_similarity
        self._embedder: Embedder | None = None
        self._indexer: SessionIndexer | None = None
        self._matrix = VectorMatrix(vectors) if vectors is not None else None
        self._loading = asyncio.Lock()
        self._tried = False

    async def by_meaning(self) -> bool:
        return await self._ready() is not None

    async def _ready(self) -> SessionIndexer | None:
        """The indexer, once the embedder is loaded (None when there is none)."""
        async with self._loading:
            if not self._tried and self._load is not None and self._vectors is not None:
                self._tried = True
                self._embedder = await asyncio.to_thread(self._load)
                if self._embedder is not None:
                    self._indexer = SessionIndexer(self._vectors, self._embedder, self._batch)
        return self._indexer

    async def index_pending(self) -> int:
        indexer = await self._ready()
        return 0 if indexer is None else await indexer.index_pending()

    async def index_forever(self, every: float) -> None:
        indexer = await self._ready()
        if indexer is not None:
            await indexer.index_forever(every)

    async def search(
        self, query: str, limit: int, scope: SearchScope = ANY_SESSION
    ) -> list[RecallHit]:
        indexer = await self._ready()
        if indexer is None or self._embedder is None or not query.strip() or limit <= 0:
            hits = await self._catalogue.search(query, limit, scope)
            return [RecallHit(hit, (WORDS,)) for hit in hits]
        assert self._vectors is not None
        mark: tuple[int, int] | None = await self._vectors.vector_mark()
        if await indexer.index_pending(mark):
            mark = None  # changed: read again
        pool = max(limit * POOL_FACTOR, MIN_POOL)
        by_words = await self._catalogue.search(query, pool, scope)
        by_meaning = await self._nearest(self._embedder, query, scope, pool, mark)
        fused = fuse_ranks([hit.message_id for hit in by_words], by_meaning)[:limit]
        return await self._hits([key for key, _ in fused], by_words, set(by_meaning), query, scope)

    async def _nearest(
        self,
        embedder: Embedder,
        query: str,
        scope: SearchScope,
        k: int,
        mark: tuple[int, int] | None,
    ) -> list[int]:
        assert self._matrix is not None
        (vector,) = await asyncio.to_thread(embedder.embed, [query])
        floor = self._min_similarity
        found = await self._matrix.nearest(embedder.name, vector, scope, k, floor, mark)
        return [message_id for message_id, _ in found]

    async def _hits(
        self,
        ranked: list[int],
        by_words: list[SearchHit],
        by_meaning: set[int],
        query: str,
        scope: SearchScope,
    ) -> list[RecallHit]:
        """The fused ids as hits, in rank order: word hits as the store gave them, the
        others read back (a message deleted meanwhile drops out)."""
        known = {hit.message_id: hit for hit in by_words}
        missing = [message_id for message_id in ranked if message_id not in known]
        if missing and self._vectors is not None:
            stems = set(terms(query))
            for message_id, key, idx, role, content in await self._vectors.found_messages(
                missing, scope
            ):
                known[message_id] = SearchHit(key, idx, role, snippet(content, stems), message_id)
        words = {hit.message_id for hit in by_words}
        return [
            RecallHit(known[message_id], _signals(message_id in words, message_id in by_meaning))
            for message_id in ranked
            if message_id in known
        ]


def _signals(words: bool, meaning: bool) -> tuple[str, ...]:
    return (WORDS,) * words + (MEANING,) * meaning


__all__ = ["DEFAULT_MIN_SIMILARITY", "MIN_POOL", "POOL_FACTOR", "SessionRecall"]
