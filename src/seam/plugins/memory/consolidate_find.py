"""What consolidation finds without a model: duplicates it may remove on its own, and the
groups of entries that only a model may merge.

Exact duplicates and entries that differ only in case, spacing or punctuation
(`normalised`) say the same thing word for word: the newest wording stays, the older
ones go, no model asked. Entries that say the same thing in other words are found by
their embeddings (cosine at least `NEAR_DUPLICATE_COSINE`, when the `recall` extra
gives an embedder): those are only candidates, and the model decides whether and how to
merge them. The model may merge nothing else, so an answer that "merges" unrelated
entries is refused before it can lose anything.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from seam.contracts.recall import Embedder
from seam.contracts.search import words

# Cosine of WordLlama's unit vectors at which two entries are candidates for a merge:
# "Works at Acme as a data engineer" / "Is a data engineer at Acme Corp" score 0.80,
# "Prefers metric units" / "Uses the metric system" 0.65, unrelated facts below 0.3.
NEAR_DUPLICATE_COSINE = 0.6


def normalised(entry: str) -> str:
    """The entry's words, folded and in order: what "the same text" means here."""
    return " ".join(words(entry))


@dataclass(frozen=True, slots=True)
class Dedupe:
    """Entries removed as duplicates of a newer one, before any model is asked."""

    kept: list[str]
    removed: list[tuple[str, str]]  # (removed entry, the newer entry it repeats)


def dedupe(entries: Sequence[str]) -> Dedupe:
    """`entries` (oldest first) with every exact or normalised duplicate of a newer entry
    left out; an entry with no words at all is compared by its text."""
    newest: dict[str, str] = {}
    for entry in entries:
        newest[normalised(entry) or entry] = entry
    kept: list[str] = []
    removed: list[tuple[str, str]] = []
    for entry in entries:
        keep = newest[normalised(entry) or entry]
        if keep is entry:
            kept.append(entry)
        else:
            removed.append((entry, keep))
    return Dedupe(kept, removed)


async def near_duplicates(
    entries: Sequence[str], embedder: Embedder | None, threshold: float = NEAR_DUPLICATE_COSINE
) -> list[list[int]]:
    """Groups (1-based entry numbers, ascending) of entries close in meaning; empty
    without an embedder. Embedding is CPU work: it runs in a thread."""
    if embedder is None or len(entries) < 2:
        return []
    vectors = await asyncio.to_thread(embedder.embed, list(entries))
    return group_pairs(len(entries), close_pairs(vectors, threshold))


def close_pairs(vectors: Sequence[bytes], threshold: float) -> list[tuple[int, int]]:
    """Pairs (0-based) of unit vectors whose cosine is at least `threshold`."""
    import numpy as np

    matrix = np.stack([np.frombuffer(v, dtype="<f4") for v in vectors])
    scores = matrix @ matrix.T
    count = len(vectors)
    return [(i, j) for i in range(count) for j in range(i + 1, count) if scores[i, j] >= threshold]


def group_pairs(count: int, pairs: Sequence[tuple[int, int]]) -> list[list[int]]:
    """Connected groups of the pairs (union-find), as 1-based numbers; singles left out."""
    parent = list(range(count))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in pairs:
        parent[root(i)] = root(j)
    groups: dict[int, list[int]] = {}
    for i in range(count):
        groups.setdefault(root(i), []).append(i + 1)
    return sorted(group for group in groups.values() if len(group) > 1)
