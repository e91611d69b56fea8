"""The PostgreSQL store as several machines use it: two stores with their own pools (two
workers' processes) on one database. The contract itself is in tests/conformance."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator

import psycopg
import pytest

from seam.contracts.execution import JournalEntry, NewSubmission, Settlement, SubmissionQuery
from seam.contracts.messages import Message
from seam.services.sessions.postgres import PostgresStore
from seam.services.sessions.postgres_schema import SCHEMA_VERSION

SESSIONS = 3
PER_SESSION = 12


@pytest.fixture
async def two_stores(
    postgres_url: str, postgres_schema: str
) -> AsyncIterator[tuple[PostgresStore, PostgresStore]]:
    # Opened together on a fresh schema: both migrate at once, one waits on the lock.
    first, second = await asyncio.gather(
        PostgresStore.connect(postgres_url, schema=postgres_schema),
        PostgresStore.connect(postgres_url, schema=postgres_schema),
    )
    yield first, second
    await first.aclose()
    await second.aclose()


async def test_concurrent_openers_migrate_once(
    two_stores: tuple[PostgresStore, PostgresStore], postgres_url: str, postgres_schema: str
) -> None:
    with psycopg.connect(postgres_url) as conn:
        rows = conn.execute(f"SELECT version FROM {postgres_schema}.seam_schema_version").fetchall()
    assert rows == [(SCHEMA_VERSION,)]
    first, second = two_stores
    await first.create("s")
    assert await second.get("s") == await first.get("s")


async def test_two_machines_never_share_a_submission_or_a_session(
    two_stores: tuple[PostgresStore, PostgresStore],
) -> None:
    first, second = two_stores
    keys = [f"session-{n}" for n in range(SESSIONS)]
    for key in keys:
        await first.create(key)
    for n in range(PER_SESSION):
        for key in keys:
            await first.admit(NewSubmission(f"{key}/{n}", key, f"message {n}"))
    total = SESSIONS * PER_SESSION

    claims: list[str] = []
    running: set[str] = set()
    overlaps: list[str] = []
    order: dict[str, list[int]] = {key: [] for key in keys}

    async def worker(store: PostgresStore, name: str) -> None:
        async with asyncio.timeout(60):
            while len(claims) < total:
                sub = await store.claim(name)
                if sub is None:
                    await store.wait_for_work(0.05)
                    continue
                claims.append(sub.id)
                if sub.session_key in running:
                    overlaps.append(sub.id)
                running.add(sub.session_key)
                order[sub.session_key].append(int(sub.id.rsplit("/", 1)[1]))
                # The database agrees: this is the session's only running submission.
                busy = await store.submissions(sub.session_key, SubmissionQuery(states=["running"]))
                if [s.id for s in busy] != [sub.id]:
                    overlaps.append(sub.id)
                await store.append_for(sub.id, name, JournalEntry([Message("user", sub.input)]))
                await store.append_for(
                    sub.id, name, JournalEntry([Message("assistant", f"done {sub.id}")])
                )
                # Leave the set before settling: the next claim of this session can only
                # commit after the settle does, so a clash seen here is a real one.
                running.discard(sub.session_key)
                await store.settle(sub.id, name, Settlement("completed", result="ok"))

    await asyncio.gather(
        *(
            worker(store, f"{label}-w{n}")
            for label, store in (("a", first), ("b", second))
            for n in range(3)
        )
    )

    assert len(claims) == total
    assert [sid for sid, n in Counter(claims).items() if n > 1] == []
    assert overlaps == []
    # Each session's messages ran in admission order, one submission after another.
    assert all(seen == list(range(PER_SESSION)) for seen in order.values())
    settled = await second.submissions(query=SubmissionQuery(states=["settled"]))
    assert len(settled) == total
    assert {s.outcome for s in settled} == {"completed"}
    assert {s.attempts for s in settled} == {1}
    for key in keys:
        transcript = [m.content for m in await second.messages(key)]
        assert transcript[::2] == [f"message {n}" for n in range(PER_SESSION)]


async def test_a_locked_submission_is_not_overtaken_by_the_next_in_its_session(
    two_stores: tuple[PostgresStore, PostgresStore], postgres_url: str, postgres_schema: str
) -> None:
    """The cause of the flake above: another transaction holds a queued submission's row
    (a claimer that skipped its session keeps the row locks it took; an admission re-sends
    the id), so the claim's SKIP LOCKED passes over it. The next one of that session must
    still wait behind it; other sessions go on."""
    first, second = two_stores
    await first.create("a")
    await first.create("b")
    for sid, key in (("a/0", "a"), ("a/1", "a"), ("a/2", "a"), ("b/0", "b")):
        await first.admit(NewSubmission(sid, key, sid))
    holder = await psycopg.AsyncConnection.connect(
        postgres_url, options=f"-c search_path={postgres_schema}"
    )
    async with holder:
        async with holder.transaction():
            await holder.execute("SELECT 1 FROM submissions WHERE id = 'a/0' FOR NO KEY UPDATE")
            taken = await second.claim("w1")
            assert taken is not None and taken.id == "b/0"
            assert await second.claim("w2") is None  # a/1 waits behind the locked a/0
        after = await second.claim("w3")
        assert after is not None and after.id == "a/0"


async def test_an_expired_lease_goes_to_exactly_one_other_machine(
    two_stores: tuple[PostgresStore, PostgresStore],
) -> None:
    first, second = two_stores
    await first.create("s")
    await first.admit(NewSubmission("job", "s", "hi"))
    crashed = await first.claim("crashed", lease=0.0)
    assert crashed is not None
    results = await asyncio.gather(
        *(store.claim(f"taker-{n}", lease=60) for n, store in enumerate([first, second] * 3))
    )
    winners = [r for r in results if r is not None]
    assert len(winners) == 1
    assert winners[0].attempts == 2


async def test_admission_on_one_machine_wakes_a_worker_on_another(
    two_stores: tuple[PostgresStore, PostgresStore],
) -> None:
    idle, busy = two_stores
    await idle.wait_for_work(0)  # starts listening; nothing is pending
    waiter = asyncio.create_task(idle.wait_for_work(60))
    await busy.create("s")
    await busy.admit(NewSubmission("job", "s", "hi"))
    async with asyncio.timeout(10):
        await waiter
    claimed = await idle.claim("idle-worker")
    assert claimed is not None and claimed.id == "job"


async def test_an_unreachable_server_is_a_clear_error() -> None:
    with pytest.raises(ConnectionError, match=r"127\.0\.0\.1:1/nothing") as caught:
        await PostgresStore.connect("postgresql://nobody:secret@127.0.0.1:1/nothing")
    assert "secret" not in str(caught.value)


async def test_migration_3_restems_the_words_of_messages_written_before(
    postgres_url: str, postgres_schema: str
) -> None:
    store = await PostgresStore.connect(postgres_url, schema=postgres_schema)
    await store.create("s")
    await store.append("s", [Message("user", "ripe bananas"), Message("tool", "bananas")])
    await store.aclose()
    # As a schema at version 2 stored them: folded words, not stems.
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(
            f"UPDATE {postgres_schema}.messages SET words = ARRAY['bananas', 'ripe']"
            " WHERE role = 'user'"
        )
        conn.execute(f"UPDATE {postgres_schema}.seam_schema_version SET version = 2")

    store = await PostgresStore.connect(postgres_url, schema=postgres_schema)
    try:
        [hit] = await store.search("banana")
        assert (hit.message_index, hit.snippet) == (0, "ripe bananas")
        assert [m.content for m in await store.messages("s")] == ["ripe bananas", "bananas"]
    finally:
        await store.aclose()
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute(
            f"SELECT version FROM {postgres_schema}.seam_schema_version"
        ).fetchall() == [(SCHEMA_VERSION,)]
        words = conn.execute(f"SELECT words FROM {postgres_schema}.messages ORDER BY idx")
        assert words.fetchall() == [(["banana", "ripe"],), (None,)]
