"""The PostgreSQL store's one-round-trip writes on a real server: the claim sent as one
pipelined implicit transaction (`postgres_claim`), a turn's step and settlement as one
statement each (`postgres_journal`), and a settlement's NOTIFY carried by the next claim
or sent alone soon after. The contract itself is in tests/conformance."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
from psycopg import AsyncConnection
from psycopg.pq import TransactionStatus

from seam.contracts.db import StoreUnavailable
from seam.contracts.execution import (
    EventRecord,
    JournalEntry,
    LeaseLost,
    NewSubmission,
    Settlement,
    Submission,
)
from seam.contracts.messages import Message, Usage
from seam.contracts.sessions import SessionNotFound, UsageRecord
from seam.services.sessions.postgres import PostgresStore
from seam.services.sessions.postgres_claim import (
    ClaimAsk,
    Claimed,
    _pick_and_note,
    claim_at_once,
)
from seam.services.sessions.postgres_execution_now import _OPEN_IN_SESSION

KEY = "s"


@pytest.fixture
async def store(postgres_url: str, postgres_schema: str) -> AsyncIterator[PostgresStore]:
    store = await PostgresStore.connect(postgres_url, schema=postgres_schema)
    await store.create(KEY)
    yield store
    await store.aclose()


@pytest.fixture
async def conn(postgres_url: str, postgres_schema: str) -> AsyncIterator[AsyncConnection[object]]:
    async with await AsyncConnection.connect(
        postgres_url, autocommit=True, options=f"-c search_path={postgres_schema}"
    ) as conn:
        yield conn


def _ask(owner: str = "w1", now: float = 1e12) -> ClaimAsk:
    return ClaimAsk(owner, now, now + 60, [], None)


async def _setting(conn: AsyncConnection[object]) -> object:
    row = await (await conn.execute("SELECT current_setting('seam.claim', true)")).fetchone()
    return None if row is None else row[0]


async def test_a_claim_at_once_takes_the_oldest_and_leaves_nothing_behind(
    store: PostgresStore, conn: AsyncConnection[object]
) -> None:
    for sid in ("a", "b"):
        await store.admit(NewSubmission(sid, KEY, sid))
    claimed = await claim_at_once(conn, _ask())
    sub = claimed.submission
    assert claimed.picked and sub is not None and claimed.last_seq == 0
    assert (sub.id, sub.state, sub.attempts, sub.lease_owner) == ("a", "running", 1, "w1")
    # Committed (the implicit transaction ended at the pipeline's sync), and the noted
    # id lived only as long as it did.
    assert conn.info.transaction_status == TransactionStatus.IDLE
    assert await _setting(conn) in (None, "")
    # "b" waits behind the running "a" of its session.
    assert await claim_at_once(conn, _ask("w2")) == Claimed(False)


async def test_a_pick_out_of_attempts_is_left_to_the_step_by_step_claim(
    store: PostgresStore, conn: AsyncConnection[object]
) -> None:
    await store.admit(NewSubmission("a", KEY, "a", max_attempts=1))
    await store.admit(NewSubmission("b", KEY, "b"))
    await store.claim("w1")
    await store.release("a", "w1", not_before=0)
    # Picked, but not claimed: no attempts left.
    assert await claim_at_once(conn, _ask()) == Claimed(True)
    untouched = await store.submission("a")
    assert untouched is not None and (untouched.state, untouched.attempts) == ("queued", 1)
    # The store's claim then settles it failed and takes the next one.
    taken = await store.claim("w2")
    assert taken is not None and taken.id == "b"
    failed = await store.submission("a")
    assert failed is not None and (failed.state, failed.outcome) == ("settled", "failed")


async def test_the_last_seq_a_turn_asks_after_its_claim_comes_with_the_claim(
    store: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store.append_events([EventRecord(KEY, n, n, "text", "{}") for n in (1, 2, 3)])
    for sid in ("a", "b"):
        await store.admit(NewSubmission(sid, KEY, sid))
    reads: list[object] = []
    one = store._one

    async def counted(query: object, params: object = None) -> object:
        reads.append(query)
        return await one(query, params)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "_one", counted)
    await store.claim("w1")
    assert await store.last_seq(KEY) == 3 and reads == []  # no statement of its own
    assert await store.last_seq(KEY) == 3 and len(reads) == 1  # the hint serves once
    # Any use of the store in between drops it: what it wrote is read back.
    await store.settle("a", "w1", Settlement("completed"))
    await store.claim("w1")
    await store.append_for("b", "w1", JournalEntry([], events=[EventRecord(KEY, 4, 4, "x", "{}")]))
    assert await store.last_seq(KEY) == 4 and len(reads) == 2


async def test_a_step_writes_everything_or_nothing_in_one_statement(store: PostgresStore) -> None:
    await store.append(KEY, [Message("user", "earlier")])
    await store.admit(NewSubmission("a", KEY, "hi"))
    await store.claim("w1")
    events = [EventRecord(KEY, n, n, "text", '{"t": "say \\"so\\""}', "a") for n in (1, 2)]
    usage = [UsageRecord("p", "m", Usage(3, 4), 0, "t1")]  # a cost of 0, an int
    step = JournalEntry(
        [Message("user", "hi"), Message("assistant", "bananas and pears")], usage, events
    )
    with pytest.raises(LeaseLost):
        await store.append_for("a", "w2", step)
    assert [m.content for m in await store.messages(KEY)] == ["earlier"]
    assert await store.events(KEY) == [] and (await store.usage_totals(KEY)).calls == 0
    await store.append_for("a", "w1", step)
    assert [m.content for m in await store.messages(KEY)] == ["earlier", "hi", "bananas and pears"]
    assert await store.events(KEY) == events
    totals = await store.usage_totals(KEY)
    assert (totals.calls, totals.usage, totals.cost_usd) == (1, Usage(3, 4), 0.0)
    [hit] = await store.search("banana")  # the words went with the row
    assert hit.message_index == 2
    sub = await store.submission("a")
    assert sub is not None and sub.steps == 2


async def test_a_step_with_events_of_a_missing_session_writes_nothing(
    store: PostgresStore,
) -> None:
    await store.admit(NewSubmission("a", KEY, "hi"))
    await store.claim("w1")
    ghost = EventRecord("ghost-key", 1, 1, "text", "{}", "a")
    with pytest.raises(SessionNotFound):
        await store.append_for("a", "w1", JournalEntry([Message("user", "hi")], events=[ghost]))
    assert await store.messages(KEY) == []
    sub = await store.submission("a")
    assert sub is not None and sub.steps == 0


@pytest.mark.parametrize("claims_next", [True, False])
async def test_a_settlement_wakes_a_waiter_elsewhere(
    store: PostgresStore, postgres_url: str, postgres_schema: str, claims_next: bool
) -> None:
    """Its NOTIFY rides on the worker's next claim, or goes alone when none comes."""
    other = await PostgresStore.connect(postgres_url, schema=postgres_schema)
    try:
        await store.admit(NewSubmission("a", KEY, "hi"))
        await store.claim("w1")
        await other.wait_for_work(0)  # listening
        waiter = asyncio.create_task(other.wait_for_work(30))
        await store.settle("a", "w1", Settlement("completed", result="ok"))
        if claims_next:
            assert await store.claim("w1") is None
        async with asyncio.timeout(10):
            await waiter
    finally:
        await other.aclose()


async def test_a_row_lock_left_by_a_stuck_worker_is_freed_for_the_next_claim(
    postgres_url: str, postgres_schema: str
) -> None:
    """A worker that hung inside a transaction holds its submission's row lock, and claims
    skip locked rows: the server ends the idle transaction, another worker takes the
    submission once its lease has run out (instead of never), and the stuck worker meets
    an outage when it comes back, not a stray error."""
    now = [1e9]
    stuck = await PostgresStore.connect(
        postgres_url, schema=postgres_schema, clock=lambda: now[0], idle_in_transaction=0.3
    )
    other = await PostgresStore.connect(postgres_url, schema=postgres_schema, clock=lambda: now[0])
    try:
        await stuck.create(KEY)
        await stuck.admit(NewSubmission("a", KEY, "hello"))
        assert await stuck.claim("w1", lease=5) is not None
        with pytest.raises(StoreUnavailable, match="idle-in-transaction"):
            async with stuck._connection() as held:  # the hung task: a lock, then nothing
                await held.execute("BEGIN")
                await held.execute("SELECT 1 FROM submissions WHERE id = 'a' FOR NO KEY UPDATE")
                now[0] += 10  # w1's lease has run out
                assert await other.claim("w2") is None  # skipped: its row is locked
                taken = await _claim_within(other, "w2", seconds=10)
        assert taken is not None and taken.id == "a"
        assert (taken.lease_owner, taken.attempts) == ("w2", 2)
    finally:
        await other.aclose()
        await stuck.aclose()


async def _claim_within(store: PostgresStore, owner: str, seconds: float) -> Submission | None:
    """Claim until one is taken or `seconds` pass (what is awaited is the server's timer)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while loop.time() < deadline:
        taken = await store.claim(owner)
        if taken is not None:
            return taken
        await asyncio.sleep(0.05)
    return None


async def _rows_read(conn: AsyncConnection[object]) -> int:
    """Rows of `submissions` this transaction has read so far (scanned or fetched)."""
    cur = await conn.execute(
        "SELECT seq_tup_read + coalesce(idx_tup_fetch, 0) FROM pg_stat_xact_user_tables"
        " WHERE relid = 'submissions'::regclass"
    )
    row = await cur.fetchone()
    return 0 if row is None else int(row[0])  # type: ignore[call-overload]


async def test_a_claim_reads_a_few_rows_however_long_the_history(
    store: PostgresStore, conn: AsyncConnection[object]
) -> None:
    """A long-lived session's settled submissions stay out of every claim: the running
    check read the whole table and the order check the session's whole history, so a
    claim grew slower with every turn ever taken. Prepared and run again, as a worker
    does (the server then plans it once for any parameters)."""
    await store.create("other")
    await conn.execute(
        "INSERT INTO submissions (id, session_key, input, state, outcome, max_attempts,"
        " created_at, updated_at, settled_at)"
        " SELECT 'old' || n, %s, 'x', 'settled', 'completed', 3, n, n, n"
        " FROM generate_series(1, 3000) AS n",
        (KEY,),
    )
    await store.admit(NewSubmission("busy", "other", "busy"))
    assert (await store.claim("w0")) is not None  # a running session elsewhere
    for n in range(3):
        await store.admit(NewSubmission(f"new{n}", KEY, "x"))
    pick = _pick_and_note(False)
    # Now, not `_ask`'s far future: the running one's lease has not run out.
    params = {**_ask(now=time.time()).params([]), "note": None, "channel": "seam"}
    async with conn.transaction(force_rollback=True):
        for _ in range(8):  # past the server's five custom plans
            before = await _rows_read(conn)
            row = await (await conn.execute(pick, params, prepare=True)).fetchone()
            assert row is not None and row[0] == "new0"
            assert await _rows_read(conn) - before < 20
    # And an ask run here (`admit_and_claim`): its look for an open submission of the
    # session, which read the session's whole history until the planner had statistics.
    async with conn.transaction(force_rollback=True):
        for _ in range(8):
            before = await _rows_read(conn)
            cur = await conn.execute(_OPEN_IN_SESSION, {"key": KEY}, prepare=True)
            assert await cur.fetchone() is not None  # new0..2 are queued
            assert await _rows_read(conn) - before < 5
