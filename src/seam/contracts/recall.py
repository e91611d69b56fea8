"""Recall by meaning beside recall by words: the embedder's contract and how two ranked
lists become one.

An `Embedder` turns texts into unit vectors on this machine (no network at run time);
the cosine of two is their dot product. Full-text search and vector search each rank
candidates; reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009) adds
`1 / (k + rank)` over the lists a candidate appears in, which needs no calibration of
the two scores against each other and is why it is the common choice.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Protocol, TypeVar, runtime_checkable

# Cormack et al.'s constant: large enough that the first few ranks of one list do not
# drown agreement between lists.
RRF_K = 60

Key = TypeVar("Key", bound=Hashable)


@runtime_checkable
class Embedder(Protocol):
    """Texts to unit-length float32 vectors of `dimensions`, computed locally."""

    @property
    def name(self) -> str:
        """Names the model and its dimensions, so a stored vector of another model is
        recomputed rather than compared."""
        ...

    @property
    def dimensions(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        """One vector per text as packed little-endian float32 (`dimensions * 4`
        bytes), normalised to length 1. CPU-bound: callers off the event loop run it in
        a thread."""
        ...


def fuse_ranks(*rankings: Sequence[Key], k: int = RRF_K) -> list[tuple[Key, float]]:
    """Reciprocal rank fusion: every key of `rankings` (each best first) with its fused
    score, best first; ties keep the order of first appearance."""
    scores: dict[Key, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda item: -item[1])


__all__ = ["RRF_K", "Embedder", "fuse_ranks"]
