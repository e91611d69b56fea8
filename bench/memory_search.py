"""How long one `memory_search` takes over 1,000 memory entries: p50 and p95.

The retrieval test set's 263 facts plus generated ones (a person, a place, a thing and a
time from small vocabularies, so words repeat as they do in real notes) make `--entries`
entries across MEMORY.md and USER.md, read from disk on every search as the tool does.
Timed: the first search after the files appear (every entry embedded and written to the
vector file beside them), a first search in a new process (vectors read from that
file), then `--queries` searches each way: hybrid (words and meaning, the default) and
full text alone (`[recall] enabled = false`). Run:

    .venv/bin/python bench/memory_search.py [--entries 1000] [--queries 200]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.support.recall_set import load_set  # noqa: E402

from seam.contracts.recall import Embedder  # noqa: E402
from seam.plugins.memory.markdown import FILES, MarkdownMemory, render_entries  # noqa: E402
from seam.plugins.memory.search import MemoryIndex  # noqa: E402
from seam.services.recall.embedder import load_embedder  # noqa: E402


def words(text: str) -> list[str]:
    return text.split()


PEOPLE = tuple(words("Ana Bram Chen Dara Emil Fatou Gus Hana Ivo Jun Kemal Lior Maya Nils"))
PLACES = tuple(words("Lisbon Oslo Kyoto Lima Porto Berlin Nairobi Quebec Krakow Zurich"))
THINGS = tuple(words("invoice ticket passport charger visa receipt contract key router lease"))
WHEN = tuple(words("Monday Friday January June weekend morning evening quarterly nightly"))


def entries(count: int, rng: random.Random) -> list[str]:
    pairs, distractors = load_set()
    made = [pair.fact for pair in pairs] + distractors
    while len(made) < count:
        who, where = rng.choice(PEOPLE), rng.choice(PLACES)
        thing, when = rng.choice(THINGS), rng.choice(WHEN)
        made.append(f"{who} keeps the {thing} for the {where} trip; check it {when} #{len(made)}.")
    return made[:count]


def timed(index: MemoryIndex, queries: Sequence[str]) -> list[float]:
    async def run() -> list[float]:
        took = []
        for query in queries:
            started = time.perf_counter()
            await index.search(query, 5)
            took.append((time.perf_counter() - started) * 1000)
        return took

    return asyncio.run(run())


def line(label: str, took: Sequence[float]) -> str:
    p95 = statistics.quantiles(took, n=20)[-1] if len(took) > 1 else took[0]
    return f"{label:28} p50 {statistics.median(took):7.2f} ms   p95 {p95:7.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    embedder: Embedder | None = load_embedder()
    if embedder is None:
        sys.exit("the recall extra is not installed: pip install 'seam[recall]'")
    loaded: Embedder = embedder
    rng = random.Random(29)
    notes = entries(args.entries, rng)
    questions = [pair.question for pair in load_set()[0]]
    queries = [rng.choice(questions) for _ in range(args.queries)]
    with tempfile.TemporaryDirectory() as folder:
        cut = len(notes) * 4 // 5
        (Path(folder) / FILES["memory"]).write_text(render_entries(notes[:cut]), "utf-8")
        (Path(folder) / FILES["user"]).write_text(render_entries(notes[cut:]), "utf-8")
        memory = MarkdownMemory(folder)
        cold = timed(MemoryIndex(memory, lambda: loaded), queries[:1])
        from_file = timed(MemoryIndex(memory, lambda: loaded), queries[:1])
        hybrid = timed(MemoryIndex(memory, lambda: loaded), queries)
        words = timed(MemoryIndex(memory, None), queries)
    print(f"{len(notes)} entries, {len(queries)} queries, limit 5, {loaded.name}")
    print(f"{'first search, embeds all':28} {cold[0]:7.1f} ms")
    print(f"{'first search, vector file':28} {from_file[0]:7.1f} ms")
    print(line("hybrid (words + meaning)", hybrid))
    print(line("full text only", words))


if __name__ == "__main__":
    main()
