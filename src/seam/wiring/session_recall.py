"""Search over past sessions by words and meaning, built from `[recall]`.

Imported only when a search or an indexer first needs it (`wiring/runtime.
lazy_session_recall`, which the runtime and the `session_search` tool share): the
one-shot `seam run` path loads none of it, nor numpy or the embedder.
"""

from __future__ import annotations

import asyncio
from typing import Any

from seam.contracts.session_recall import KeepsVectors, SessionRecall
from seam.contracts.sessions import SessionStore
from seam.wiring.settings import RecallSection, Settings


def build_session_recall(store: SessionStore, settings: Settings | None) -> SessionRecall:
    """Words and meaning over `store` when `[recall] enabled` and the store keeps vectors
    (the embedder loads on first use, and may turn out missing); else full text."""
    from seam.services.recall.embedder import load_embedder
    from seam.services.recall.session_recall import SessionRecall as Recall

    section = recall_section(settings)
    keeps = section.enabled and isinstance(store, KeepsVectors)
    vectors = store.message_vectors() if keeps else None  # type: ignore[attr-defined]
    return Recall(
        store,
        vectors,
        load_embedder,
        batch=section.batch_size,
        min_similarity=section.min_similarity,
    )


def recall_section(settings: Settings | None) -> RecallSection:
    return settings.config.recall if settings is not None else RecallSection()


def start_indexing(recall: SessionRecall, settings: Settings | None) -> asyncio.Task[Any]:
    """The background indexer of a long-running process (`seam serve`, `seam gateway`):
    new messages get their vectors between searches, off every turn's path, every
    `[recall] index_every`. It ends at once where there is nothing to index with (no
    embedder, `[recall]` off); the caller cancels it when the process stops."""
    every = recall_section(settings).index_every_seconds
    return asyncio.ensure_future(recall.index_forever(every))


__all__ = ["build_session_recall", "recall_section", "start_indexing"]
