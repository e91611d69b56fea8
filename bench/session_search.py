"""Full-text search over a large SQLite session store: how long does one search take?

Fills a fresh store (a real file in a temp dir, WAL mode, through `append` as the agent
loop writes) with 100,000 messages in 2,500 sessions: user questions, assistant answers
and tool output (not indexed, as in real use), built from a vocabulary with a long tail
(common words, technical terms, names, identifiers, numbers), so some words hit tens of
thousands of messages and others a handful. Then times `search(query, limit=20)` for a
mix of queries (one common word, a rare identifier, two or three words, words with no hit,
FTS5 syntax a user might type), each also with `exclude_session` as the `session_search`
tool sends it. Wall-clock time per call, snippets included. Run:

    .venv/bin/python bench/session_search.py [--messages 100000] [--queries 600]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from seam.contracts.messages import Message, ToolCall
from seam.contracts.sessions import NewSession, SearchScope
from seam.services.sessions.sqlite import SQLiteSessionStore


def words(text: str) -> list[str]:
    return text.split()


COMMON = words(
    "the a to of and is in it that for you this with on be can not are have your what "
    "how do if or will at from but by so my we as all there about just like when one "
    "would need should could use get make want more some also then than only which"
)
TOPIC = words(
    "file files directory folder config settings error errors build test tests deploy "
    "server database query index table column migration backup script python rust "
    "docker container image network proxy port certificate token key password login "
    "user account email calendar meeting invoice budget report draft summary notes "
    "recipe dinner trip flight hotel train ticket weather garden bike run training "
    "book chapter paper review release version branch commit merge patch bug fix "
    "memory cache timeout retry latency throughput disk cpu log logs warning crash"
)
NAMES = words(
    "Alice Bob Carol Dave Erin Frank Grace Heidi Ivan Judy Mallory Niaj Olivia Peggy "
    "Lisbon Porto Berlin Zürich Kyoto Oslo Nairobi Lima Québec Kraków Seam Postgres "
    "SQLite GitHub Kubernetes Linux macOS Windows Firefox Android"
)
VERBS = words(
    "check run open read write fix update install remove rename move copy restart "
    "schedule send book compare explain summarise translate plan cancel rebuild"
)


def make_rare(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.4:
        return (
            f"{rng.choice(TOPIC)}_{rng.randrange(5000)}.{rng.choice(['py', 'md', 'toml', 'log'])}"
        )
    if kind < 0.7:
        return f"{rng.choice(VERBS)}{rng.choice(TOPIC).capitalize()}{rng.randrange(900)}"
    return str(rng.randrange(100_000))


class Writer:
    """Zipf-ish text: a few words everywhere, a long tail of identifiers almost nowhere."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.rare = [make_rare(rng) for _ in range(40_000)]

    def word(self) -> str:
        r = self.rng.random()
        if r < 0.45:
            return self.rng.choice(COMMON)
        if r < 0.75:
            return self.rng.choice(TOPIC)
        if r < 0.85:
            return self.rng.choice(VERBS)
        if r < 0.93:
            return self.rng.choice(NAMES)
        return self.rng.choice(self.rare)

    def text(self, mean_words: float) -> str:
        count = max(3, int(self.rng.lognormvariate(0, 0.6) * mean_words))
        words = [self.word() for _ in range(count)]
        sentences, start = [], 0
        while start < count:
            end = min(count, start + self.rng.randint(6, 18))
            sentence = " ".join(words[start:end])
            sentences.append(sentence[:1].upper() + sentence[1:] + self.rng.choice(".?!."))
            start = end
        return " ".join(sentences)


def turn(writer: Writer, rng: random.Random, n: int) -> list[Message]:
    """A user question, sometimes a tool call and its output, an answer."""
    messages = [Message("user", writer.text(18))]
    if rng.random() < 0.4:
        call = ToolCall(f"c{n}", "read_file", f'{{"path": "{rng.choice(writer.rare)}"}}')
        messages.append(Message("assistant", "", tool_calls=(call,)))
        messages.append(Message("tool", writer.text(120), tool_call_id=call.id, name="read_file"))
    messages.append(Message("assistant", writer.text(45)))
    return messages


async def fill(store: SQLiteSessionStore, total: int, sessions: int, rng: random.Random) -> int:
    writer = Writer(rng)
    per_session = total // sessions
    written = 0
    for s in range(sessions):
        key = f'agent-session:["local","default","bench-{s}"]'
        await store.create(key, NewSession(personality="default"))
        transcript: list[Message] = []
        while len(transcript) < per_session:
            transcript.extend(turn(writer, rng, written + len(transcript)))
        transcript = transcript[:per_session]
        # Appended a turn at a time, as the agent loop does.
        for start in range(0, len(transcript), 4):
            await store.append(key, transcript[start : start + 4])
        written += len(transcript)
    return written


def queries(rng: random.Random, writer_rare: list[str], count: int) -> dict[str, list[str]]:
    def pick(make: Callable[[], str]) -> list[str]:
        return [make() for _ in range(count // 6)]

    return {
        "one common word": pick(lambda: rng.choice(TOPIC)),
        "a rare identifier": pick(lambda: rng.choice(writer_rare)),
        "two words": pick(lambda: f"{rng.choice(TOPIC)} {rng.choice(NAMES)}"),
        "three words": pick(lambda: f"{rng.choice(VERBS)} {rng.choice(TOPIC)} {rng.choice(TOPIC)}"),
        "no hit": pick(lambda: f"{rng.choice(TOPIC)} zzyzx{rng.randrange(1000)}"),
        "FTS syntax typed by a user": pick(
            lambda: f'"{rng.choice(TOPIC)}" ({rng.choice(NAMES)}* -{rng.choice(COMMON)}'
        ),
    }


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def line(label: str, samples: list[float], hits: list[int] | None = None) -> str:
    text = (
        f"  {label:<30} p50 {statistics.median(samples):6.2f} ms   p95 "
        f"{percentile(samples, 0.95):6.2f} ms   max {max(samples):6.2f} ms"
    )
    return text if hits is None else f"{text}   hits/query {statistics.fmean(hits):4.1f}"


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--sessions", type=int, default=2_500)
    parser.add_argument("--queries", type=int, default=600)
    args = parser.parse_args()
    rng = random.Random(20240501)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sessions.db"
        store = SQLiteSessionStore(str(path))
        try:
            started = time.perf_counter()
            written = await fill(store, args.messages, args.sessions, rng)
            filled = time.perf_counter() - started
            store.connector.checkpoint()
            size = path.stat().st_size / 1e6
            print(
                f"{written:,} messages in {args.sessions:,} sessions, written in {filled:.1f} s"
                f" ({written / filled:,.0f} messages/s); file {size:.0f} MB"
            )
            rare = Writer(random.Random(20240501)).rare  # the same tail the text used
            groups = queries(random.Random(7), rare, args.queries)
            current = 'agent-session:["local","default","bench-0"]'
            for query in [q for qs in groups.values() for q in qs][:50]:  # warm the cache
                await store.search(query)
            everything: list[float] = []
            excluded: list[float] = []
            print(f"search(query, limit=20), {args.queries} queries, wall-clock per call:")
            for label, group in groups.items():
                samples, hits = [], []
                for query in group:
                    start = time.perf_counter()
                    found = await store.search(query, 20)
                    samples.append((time.perf_counter() - start) * 1000)
                    hits.append(len(found))
                    start = time.perf_counter()
                    await store.search(query, 20, SearchScope(exclude_session=current))
                    excluded.append((time.perf_counter() - start) * 1000)
                everything += samples
                print(line(label, samples, hits))
            print(line("all queries", everything))
            print(line("all, excluding a session", excluded))
        finally:
            await store.aclose()


if __name__ == "__main__":
    asyncio.run(main())
