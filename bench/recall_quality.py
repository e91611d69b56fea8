"""How well memory search finds a fact asked for in other words: recall at 1 and at 5.

The retrieval test set (`tests/fixtures/recall/pairs.json`: 66 questions, each answered
by one fact sharing almost no word with it, among 197 distractor facts) becomes one
MEMORY.md; every question is asked three ways: full text alone (BM25 over the session
search's word rules), meaning alone (the local embedder's cosine) and hybrid (the two
fused by reciprocal rank, what `memory_search` answers). Recall at k is the share of
questions whose fact is among the first k entries. Run:

    .venv/bin/python bench/recall_quality.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.support.recall_set import WAYS, load_set, recall_at, write_haystack  # noqa: E402

from seam.services.recall.embedder import load_embedder  # noqa: E402

KS = (1, 5)


def main() -> None:
    embedder = load_embedder()
    if embedder is None:
        sys.exit("the recall extra is not installed: pip install 'seam[recall]'")
    pairs, distractors = load_set()
    with tempfile.TemporaryDirectory() as folder:
        write_haystack(Path(folder), pairs, distractors)
        started = time.perf_counter()
        recall = asyncio.run(recall_at(Path(folder), embedder, KS))
        seconds = time.perf_counter() - started
    print(f"{len(pairs)} questions, {len(pairs) + len(distractors)} entries, {embedder.name}")
    print(f"{'':10} {'recall@1':>9} {'recall@5':>9}")
    for way in WAYS:
        at_1, at_5 = recall[way]
        print(f"{way:10} {at_1:9.2f} {at_5:9.2f}")
    print(f"({seconds:.1f} s for every question three ways, entries embedded once)")


if __name__ == "__main__":
    main()
