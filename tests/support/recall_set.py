"""The retrieval test set (`tests/fixtures/recall/pairs.json`) as a memory folder, and
recall at k of each way `memory_search` can rank it.

Every fact and distractor becomes one MEMORY.md entry (in a fixed shuffled order, so a
fact's position says nothing); each question is then asked three ways: full text alone
(BM25), meaning alone (the embedder's cosine) and hybrid (the two fused, what
`memory_search` answers). Shared by the test that holds hybrid above full text and by
`bench/recall_quality.py`, which prints the figures.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from seam.contracts.recall import Embedder
from seam.plugins.memory.bm25 import bm25_rank
from seam.plugins.memory.markdown import FILES, MarkdownMemory, render_entries
from seam.plugins.memory.search import MemoryIndex, read_entries

PAIRS = Path(__file__).resolve().parent.parent / "fixtures" / "recall" / "pairs.json"
WAYS = ("full text", "meaning", "hybrid")


@dataclass(frozen=True)
class Pair:
    question: str
    fact: str


def load_set() -> tuple[list[Pair], list[str]]:
    data = json.loads(PAIRS.read_text(encoding="utf-8"))
    pairs = [Pair(item["question"], item["fact"]) for item in data["pairs"]]
    return pairs, list(data["distractors"])


def write_haystack(folder: Path, pairs: Sequence[Pair], distractors: Sequence[str]) -> None:
    """Facts and distractors as MEMORY.md in `folder`, shuffled with a fixed seed."""
    entries = [pair.fact for pair in pairs] + list(distractors)
    random.Random(29).shuffle(entries)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / FILES["memory"]).write_text(render_entries(entries), encoding="utf-8")


async def recall_at(folder: Path, embedder: Embedder, ks: Sequence[int]) -> dict[str, list[float]]:
    """Recall at each of `ks` for every way of ranking: the share of questions whose
    fact is among the first k entries returned."""
    pairs, _ = load_set()
    memory = MarkdownMemory(folder)
    index = MemoryIndex(memory, lambda: embedder)
    entries = read_entries(memory)
    texts = [entry.text for entry in entries]
    deepest = max(ks)
    hits = {way: [0] * len(ks) for way in WAYS}
    for pair in pairs:
        found = {
            "full text": [texts[i] for i in bm25_rank(pair.question, texts)[:deepest]],
            "meaning": [texts[i] for i in index.meaning_rank(pair.question, entries) or []],
            "hybrid": [m.text for m in (await index.search(pair.question, deepest)).matches],
        }
        for way, ranked in found.items():
            for at, k in enumerate(ks):
                hits[way][at] += pair.fact in ranked[:k]
    return {way: [count / len(pairs) for count in counts] for way, counts in hits.items()}
