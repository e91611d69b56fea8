"""Search over past sessions by words and meaning (hybrid) next to full text alone, over a
SQLite store of 20,000 messages: the one-off indexing time, then latency per search.

Fills a fresh store as `session_search.py` does (user questions, assistant answers, tool
output that is not searched), embeds every searchable message with the local embedder
(WordLlama, the `recall` extra) the way the background indexer does (batches in a worker
thread), then times `SessionRecall.search(query, limit=20)` with meaning and the store's
full-text `search` for the same queries, each with the asking session left out as the
`session_search` tool sends it. The first hybrid search loads the vectors into the matrix
(reported apart); later ones reuse it until the index changes. Wall-clock per call. Run:

    .venv/bin/python bench/recall.py [--messages 20000] [--queries 300]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from pathlib import Path

from session_search import Writer, fill, line, queries

from seam.contracts.sessions import SearchScope
from seam.services.recall.embedder import load_embedder
from seam.services.recall.session_recall import SessionRecall
from seam.services.sessions.sqlite import SQLiteSessionStore

CURRENT = 'agent-session:["local","default","bench-0"]'


async def index(store: SQLiteSessionStore, recall: SessionRecall) -> None:
    vectors = store.message_vectors()
    await recall.by_meaning()  # the embedder, loaded already
    started = time.perf_counter()
    indexed = await recall.index_pending()
    took = time.perf_counter() - started
    print(
        f"indexed {indexed:,} messages in {took:.2f} s ({indexed / took:,.0f} messages/s);"
        f" {(await vectors.vector_mark())[0]:,} vectors"
    )
    started = time.perf_counter()
    again = await recall.index_pending()
    print(f"catch-up with nothing new: {(time.perf_counter() - started) * 1000:.2f} ms ({again})")


async def measure(store: SQLiteSessionStore, recall: SessionRecall, count: int) -> None:
    rare = Writer(random.Random(20240501)).rare
    groups = queries(random.Random(7), rare, count)
    scope = SearchScope(exclude_session=CURRENT)
    started = time.perf_counter()
    await recall.search("warm the matrix", 20, scope)
    first = (time.perf_counter() - started) * 1000
    print(f"first hybrid search (loads the vector matrix): {first:.1f} ms")
    hybrid: list[float] = []
    words: list[float] = []
    for group in groups.values():
        for query in group:
            started = time.perf_counter()
            await recall.search(query, 20, scope)
            hybrid.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            await store.search(query, 20, scope)
            words.append((time.perf_counter() - started) * 1000)
    print(f"search(query, limit=20), {len(hybrid)} queries, wall-clock per call:")
    print(line("hybrid (words + meaning)", hybrid))
    print(line("full text alone", words))


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    started = time.perf_counter()
    if load_embedder() is None:
        raise SystemExit("the recall extra is not installed: pip install 'seam[recall]'")
    print(f"embedder loaded in {(time.perf_counter() - started) * 1000:.0f} ms")
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteSessionStore(str(Path(tmp) / "sessions.db"))
        try:
            sessions = max(1, args.messages // 40)
            written = await fill(store, args.messages, sessions, random.Random(20240501))
            print(f"{written:,} messages in {sessions:,} sessions (tool output not indexed)")
            recall = SessionRecall(store, store.message_vectors(), load_embedder)
            await index(store, recall)
            await measure(store, recall, args.queries)
        finally:
            await store.aclose()


if __name__ == "__main__":
    asyncio.run(main())
