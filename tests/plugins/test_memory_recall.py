"""The retrieval test set (`tests/fixtures/recall/pairs.json`): questions asked in other
words than the facts that answer them, among a few hundred distractors. Hybrid search
(what `memory_search` answers) must find more of them in its first five than full text
alone. Behaviour, not a benchmark: `bench/recall_quality.py` prints the figures.

Measured when written (WordLlama l2_supercat 256): recall@5 full text 0.03 (2 of 66),
meaning alone 0.62, hybrid 0.62 (41 of 66); recall@1 0.03, 0.21, 0.17.
"""

from __future__ import annotations

from pathlib import Path

from seam.contracts.search import terms
from seam.plugins.memory.bm25 import STOP_WORDS
from seam.services.recall.embedder import load_embedder
from tests.support.recall_set import load_set, recall_at, write_haystack

HYBRID_AT_5_AT_LEAST = 0.6


def test_the_set_is_large_and_its_pairs_share_few_words() -> None:
    pairs, distractors = load_set()
    assert len(pairs) >= 60 and len(pairs) + len(distractors) >= 250
    assert len({pair.fact for pair in pairs} | set(distractors)) == len(pairs) + len(distractors)
    stop = set(terms(" ".join(STOP_WORDS)))
    shared = [len((set(terms(pair.question)) - stop) & set(terms(pair.fact))) for pair in pairs]
    assert sum(1 for count in shared if count == 0) >= 0.8 * len(pairs)
    assert max(shared) <= 2  # when written: 58 share none, 7 one word, 1 two


async def test_hybrid_recall_at_5_beats_full_text(tmp_path: Path) -> None:
    embedder = load_embedder()
    assert embedder is not None
    pairs, distractors = load_set()
    write_haystack(tmp_path, pairs, distractors)
    recall = await recall_at(tmp_path, embedder, (1, 5))
    full_text, hybrid = recall["full text"][1], recall["hybrid"][1]
    assert hybrid > full_text, recall
    assert hybrid >= HYBRID_AT_5_AT_LEAST, recall
