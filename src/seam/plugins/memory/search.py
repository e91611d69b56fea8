"""Hybrid search over one memory folder's entries: full text fused with meaning.

Full text (BM25, `bm25.py`) finds an entry sharing the question's words; local
embeddings find one that says the same thing in other words ("where did I write down
the cabin's internet login?" against "the wifi password is in the blue notebook").
Reciprocal rank fusion (`contracts.recall.fuse_ranks`) merges the two lists without
weighing one score against the other.

Embedding is incremental and never on a write's path: the `memory` tool and the CLI
write files and nothing else; the next search embeds the entries whose text it has not
seen (by SHA-256, `vectors.py`), in a worker thread, and keeps their vectors beside the
files. `refresh()` does the same ahead of time for a background task.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from seam.contracts.memory_search import (
    FULL_TEXT_ONLY,
    MemoryMatch,
    MemorySearchResult,
    Signal,
)
from seam.contracts.recall import Embedder, fuse_ranks
from seam.plugins.memory.bm25 import bm25_rank, content_words
from seam.plugins.memory.markdown import FILES, TARGETS, MarkdownMemory
from seam.plugins.memory.vectors import VectorFile, digest

if TYPE_CHECKING:
    import numpy

# How many entries the meaning side ranks at most, and the cosine below which an entry
# is not counted as found by meaning at all (WordLlama's unrelated texts sit near 0).
MEANING_CANDIDATES = 50
MIN_SIMILARITY = 0.1
# What is embedded is an entry's content words (`bm25.content_words`): stored vectors are
# named for the embedder and this preparation, so changing either recomputes them.
PREPARED = "+content-words"

EmbedderSource = Callable[[], Embedder | None]


@dataclass(frozen=True, slots=True)
class Entry:
    file: str
    number: int
    text: str


def read_entries(memory: MarkdownMemory) -> list[Entry]:
    """Every entry of both files, in the order `seam memory show` lists them."""
    return [
        Entry(FILES[target], number, text)
        for target in TARGETS
        for number, text in enumerate(memory.entries(target), start=1)
    ]


class MemoryIndex:
    """`contracts.memory_search.MemorySearch` over `memory`'s files.

    `embedder` loads the embedder (None, or a source answering None: full text only,
    said once in the result's `note`). Vectors live in memory for this process and in
    `VectorFile(memory.folder)` across processes."""

    def __init__(self, memory: MarkdownMemory, embedder: EmbedderSource | None = None) -> None:
        self.memory = memory
        self._embedder = embedder
        self._file = VectorFile(memory.folder)
        self._vectors: dict[str, bytes] = {}
        self._loaded_for: str | None = None
        self._lock = threading.Lock()  # one thread embeds at a time; the rest reuse it

    async def search(self, query: str, limit: int) -> MemorySearchResult:
        return await asyncio.to_thread(self.search_now, query, limit)

    def search_now(self, query: str, limit: int) -> MemorySearchResult:
        """`search`, blocking: it reads the files and may load the embedder and embed
        the entries it has not seen (`search` runs it in a worker thread)."""
        entries = read_entries(self.memory)
        by_words = bm25_rank(query, [entry.text for entry in entries])
        by_meaning = self.meaning_rank(query, entries) if query.strip() else []
        note = FULL_TEXT_ONLY if by_meaning is None else None
        return MemorySearchResult(_fused(entries, by_words, by_meaning or [], limit), note)

    def meaning_rank(self, query: str, entries: Sequence[Entry]) -> list[int] | None:
        """Indexes of `entries` by cosine with `query`, best first, at most
        MEANING_CANDIDATES of them at MIN_SIMILARITY or more; None without an embedder.
        Blocking (it may embed): run it in a thread."""
        embedder = self._embedder() if self._embedder is not None else None
        if embedder is None:
            return None
        matrix = self._matrix(embedder, [entry.text for entry in entries])
        if matrix is None:
            return []
        import numpy as np

        question = np.frombuffer(embedder.embed([content_words(query)])[0], dtype="<f4")
        cosines = matrix @ question
        best = np.argsort(-cosines, kind="stable")[:MEANING_CANDIDATES]
        return [int(i) for i in best if cosines[i] >= MIN_SIMILARITY]

    def refresh(self) -> int:
        """Embed the entries not embedded yet (for a background task; blocking). Returns
        how many were embedded."""
        embedder = self._embedder() if self._embedder is not None else None
        if embedder is None:
            return 0
        return self._vectors_of(embedder, [e.text for e in read_entries(self.memory)])[1]

    def _matrix(self, embedder: Embedder, texts: Sequence[str]) -> numpy.ndarray | None:
        if not texts:
            return None
        import numpy as np

        rows = b"".join(self._vectors_of(embedder, texts)[0])
        return np.frombuffer(rows, dtype="<f4").reshape(len(texts), embedder.dimensions)

    def _vectors_of(self, embedder: Embedder, texts: Sequence[str]) -> tuple[list[bytes], int]:
        """One vector per text, and how many had to be embedded now: the rest come from
        this process, else from the file. New vectors are written to the file, which
        then forgets the vectors of entries no longer there."""
        keys = [digest(text) for text in texts]
        with self._lock:
            name = f"{embedder.name}{PREPARED}"
            if self._loaded_for != name:
                self._vectors = self._file.load(name)
                self._loaded_for = name
            known = self._vectors
            missing = {key: text for key, text in zip(keys, texts, strict=True) if key not in known}
            if missing:
                prepared = [content_words(text) for text in missing.values()]
                made = dict(zip(missing, embedder.embed(prepared), strict=True))
                known.update(made)
                self._vectors = known = {key: known[key] for key in keys}
                self._file.store(name, made, keep=known.keys())
            return [known[key] for key in keys], len(missing)


def _fused(
    entries: Sequence[Entry], by_words: list[int], by_meaning: list[int], limit: int
) -> tuple[MemoryMatch, ...]:
    """The best `limit` entries of both rankings, fused, each with its signals."""
    words, meaning = set(by_words), set(by_meaning)
    matches = []
    for index, _score in fuse_ranks(by_words, by_meaning)[:limit]:
        signals: list[Signal] = []
        if index in words:
            signals.append("words")
        if index in meaning:
            signals.append("meaning")
        entry = entries[index]
        matches.append(MemoryMatch(entry.file, entry.number, entry.text, tuple(signals)))
    return tuple(matches)


__all__ = ["MEANING_CANDIDATES", "MIN_SIMILARITY", "Entry", "MemoryIndex", "read_entries"]
