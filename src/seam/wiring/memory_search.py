"""The search behind `memory_search` and `seam memory search`: one `MemoryIndex` per
memory folder (the owner's, each tenant's), with the local embedder unless `[recall]
enabled = false` or the recall extra is missing (then full text alone, said once).

Loaded on the first search only (`wiring.memory.memory_searches` imports it then), so
neither the search modules nor the embedder cost `seam run` anything.
"""

from __future__ import annotations

import threading
from pathlib import Path

from seam.contracts.memory import MemoryProvider
from seam.contracts.memory_search import MemorySearchResult
from seam.plugins.memory.markdown import MarkdownMemory
from seam.plugins.memory.search import EmbedderSource, MemoryIndex
from seam.services.recall.embedder import load_embedder
from seam.wiring.settings import Settings

# Indexes kept per process (one per memory folder searched); past this, the oldest goes
# and its folder's vectors are read back from its file on the next search.
MAX_INDEXES = 256

_lock = threading.Lock()
_indexes: dict[tuple[Path, bool], MemoryIndex] = {}


def embedder_source(recall: bool) -> EmbedderSource | None:
    """The embedder loader when search by meaning is on, else None."""
    return load_embedder if recall else None


def search_for(memory: MemoryProvider, recall: bool) -> MemoryIndex | None:
    """The index over `memory`'s own folder (None for a memory without files, such as
    the no-op memory of a tenant whose name cannot hold files)."""
    if not isinstance(memory, MarkdownMemory):
        return None
    key = (memory.folder, recall)
    with _lock:
        index = _indexes.get(key)
        if index is None:
            if len(_indexes) >= MAX_INDEXES:
                del _indexes[next(iter(_indexes))]
            index = _indexes[key] = MemoryIndex(memory, embedder_source(recall))
        return index


async def search_memory(
    settings: Settings, memory: MarkdownMemory, query: str, limit: int
) -> MemorySearchResult:
    """`seam memory search`: `memory` (the owner's) searched as `[recall]` says."""
    index = MemoryIndex(memory, embedder_source(settings.config.recall.enabled))
    return await index.search(query, limit)


__all__ = ["MAX_INDEXES", "embedder_source", "search_for", "search_memory"]
